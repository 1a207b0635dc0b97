-- A deterministic TPC-H-shaped sample with the standard table and column names of Trino's tpch connector
-- (tpch.column-naming=STANDARD) at the sizes of its `tiny` schema, so that the same SQL runs on both engines.
-- Values come from hashes of row numbers: the same on every start, not the official dbgen data.
CREATE SCHEMA tiny;
CREATE FUNCTION tiny.r(i bigint, salt int, m bigint) RETURNS bigint LANGUAGE sql IMMUTABLE
  AS $$ SELECT abs(hashint8(i * 7919 + salt)) % m $$;

CREATE TABLE tiny.region (r_regionkey bigint, r_name varchar, r_comment varchar);
INSERT INTO tiny.region VALUES
  (0, 'AFRICA', 'lar deposits'), (1, 'AMERICA', 'hs use ironic'), (2, 'ASIA', 'ges. thinly even'),
  (3, 'EUROPE', 'ly final courts'), (4, 'MIDDLE EAST', 'uickly special accounts');

CREATE TABLE tiny.nation (n_nationkey bigint, n_name varchar, n_regionkey bigint, n_comment varchar);
INSERT INTO tiny.nation VALUES
  (0, 'ALGERIA', 0, 'haggle'), (1, 'ARGENTINA', 1, 'al foxes'), (2, 'BRAZIL', 1, 'y alongside'),
  (3, 'CANADA', 1, 'eas hang'), (4, 'EGYPT', 4, 'y above'), (5, 'ETHIOPIA', 0, 'ven packages'),
  (6, 'FRANCE', 3, 'refully final'), (7, 'GERMANY', 3, 'l platelets'), (8, 'INDIA', 2, 'ss excuses'),
  (9, 'INDONESIA', 2, 'slyly express'), (10, 'IRAN', 4, 'efully alongside'), (11, 'IRAQ', 4, 'nic deposits'),
  (12, 'JAPAN', 2, 'ously. final'), (13, 'JORDAN', 4, 'ic deposits'), (14, 'KENYA', 0, 'pending excuses'),
  (15, 'MOROCCO', 0, 'rns. blithely'), (16, 'MOZAMBIQUE', 0, 's. ironic'), (17, 'PERU', 1, 'platelets'),
  (18, 'CHINA', 2, 'c dependencies'), (19, 'ROMANIA', 3, 'ular asymptotes'), (20, 'SAUDI ARABIA', 4, 'ts. silent'),
  (21, 'VIETNAM', 2, 'hely enticingly'), (22, 'RUSSIA', 3, 'requests against'), (23, 'UNITED KINGDOM', 3, 'eans boost'),
  (24, 'UNITED STATES', 1, 'y final packages');

CREATE TABLE tiny.supplier AS
SELECT i AS s_suppkey,
       'Supplier#' || lpad(i::text, 9, '0') AS s_name,
       md5('sa' || i) AS s_address,
       tiny.r(i, 1, 25) AS s_nationkey,
       (10 + tiny.r(i, 1, 25)) || '-' || (100 + tiny.r(i, 2, 900)) || '-' || (100 + tiny.r(i, 3, 900)) || '-' || (1000 + tiny.r(i, 4, 9000)) AS s_phone,
       round((tiny.r(i, 5, 1099999) - 99999) / 100.0, 2)::double precision AS s_acctbal,
       'supplier comment ' || i AS s_comment
FROM generate_series(1, 100) AS i;

CREATE TABLE tiny.customer AS
SELECT i AS c_custkey,
       'Customer#' || lpad(i::text, 9, '0') AS c_name,
       md5('ca' || i) AS c_address,
       tiny.r(i, 11, 25) AS c_nationkey,
       (10 + tiny.r(i, 11, 25)) || '-' || (100 + tiny.r(i, 12, 900)) || '-' || (100 + tiny.r(i, 13, 900)) || '-' || (1000 + tiny.r(i, 14, 9000)) AS c_phone,
       round((tiny.r(i, 15, 1099999) - 99999) / 100.0, 2)::double precision AS c_acctbal,
       (ARRAY['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'HOUSEHOLD', 'MACHINERY'])[1 + tiny.r(i, 16, 5)] AS c_mktsegment,
       'customer comment ' || i AS c_comment
FROM generate_series(1, 1500) AS i;

CREATE TABLE tiny.part AS
SELECT i AS p_partkey,
       'part ' || (ARRAY['almond', 'blue', 'coral', 'drab', 'forest', 'khaki', 'navy', 'plum'])[1 + tiny.r(i, 21, 8)] || ' ' || i AS p_name,
       'Manufacturer#' || (1 + tiny.r(i, 22, 5)) AS p_mfgr,
       'Brand#' || (1 + tiny.r(i, 22, 5)) || (1 + tiny.r(i, 23, 5)) AS p_brand,
       (ARRAY['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'])[1 + tiny.r(i, 24, 6)] || ' ' ||
         (ARRAY['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'])[1 + tiny.r(i, 25, 5)] || ' ' ||
         (ARRAY['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'])[1 + tiny.r(i, 26, 5)] AS p_type,
       (1 + tiny.r(i, 27, 50))::integer AS p_size,
       (ARRAY['SM', 'LG', 'MED', 'JUMBO', 'WRAP'])[1 + tiny.r(i, 28, 5)] || ' ' || (ARRAY['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'])[1 + tiny.r(i, 29, 8)] AS p_container,
       (90000 + ((i / 10) % 20001) + 100 * (i % 1000)) / 100.0::double precision AS p_retailprice,
       'part comment ' || i AS p_comment
FROM generate_series(1, 2000) AS i;

CREATE TABLE tiny.partsupp AS
SELECT p AS ps_partkey,
       1 + ((p + s * (100 / 4 + (p - 1) / 100)) % 100) AS ps_suppkey,
       (1 + tiny.r(p * 4 + s, 31, 9999))::integer AS ps_availqty,
       (100 + tiny.r(p * 4 + s, 32, 99901)) / 100.0::double precision AS ps_supplycost,
       'partsupp comment ' || p || '-' || s AS ps_comment
FROM generate_series(1, 2000) AS p, generate_series(0, 3) AS s;

CREATE TABLE tiny.orders AS
SELECT i AS o_orderkey,
       -- as in dbgen, a third of customers place no orders
       (1 + tiny.r(i, 41, 1000)) * 3 / 2 AS o_custkey,
       (ARRAY['F', 'O', 'P'])[1 + tiny.r(i, 42, 3)] AS o_orderstatus,
       round((1000 + tiny.r(i, 43, 50000000)) / 100.0, 2)::double precision AS o_totalprice,
       DATE '1992-01-01' + tiny.r(i, 44, 2405)::int AS o_orderdate,
       (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])[1 + tiny.r(i, 45, 5)] AS o_orderpriority,
       'Clerk#' || lpad((1 + tiny.r(i, 46, 1000))::text, 9, '0') AS o_clerk,
       0 AS o_shippriority,
       'order comment ' || i AS o_comment
FROM generate_series(1, 15000) AS i;

CREATE TABLE tiny.lineitem AS
SELECT o.o_orderkey AS l_orderkey,
       1 + tiny.r(o.o_orderkey * 8 + n, 51, 2000) AS l_partkey,
       1 + tiny.r(o.o_orderkey * 8 + n, 52, 100) AS l_suppkey,
       n::integer AS l_linenumber,
       (1 + tiny.r(o.o_orderkey * 8 + n, 53, 50))::double precision AS l_quantity,
       round((90000 + tiny.r(o.o_orderkey * 8 + n, 54, 10000000)) / 100.0, 2)::double precision AS l_extendedprice,
       tiny.r(o.o_orderkey * 8 + n, 55, 11) / 100.0::double precision AS l_discount,
       tiny.r(o.o_orderkey * 8 + n, 56, 9) / 100.0::double precision AS l_tax,
       (ARRAY['A', 'N', 'R'])[1 + tiny.r(o.o_orderkey * 8 + n, 57, 3)] AS l_returnflag,
       (ARRAY['F', 'O'])[1 + tiny.r(o.o_orderkey * 8 + n, 58, 2)] AS l_linestatus,
       o.o_orderdate + (1 + tiny.r(o.o_orderkey * 8 + n, 59, 121))::int AS l_shipdate,
       o.o_orderdate + (30 + tiny.r(o.o_orderkey * 8 + n, 60, 61))::int AS l_commitdate,
       o.o_orderdate + (2 + tiny.r(o.o_orderkey * 8 + n, 61, 150))::int AS l_receiptdate,
       (ARRAY['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'])[1 + tiny.r(o.o_orderkey * 8 + n, 62, 4)] AS l_shipinstruct,
       (ARRAY['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'])[1 + tiny.r(o.o_orderkey * 8 + n, 63, 7)] AS l_shipmode,
       'lineitem comment ' || o.o_orderkey || '-' || n AS l_comment
FROM tiny.orders o, generate_series(1, 7) AS n
WHERE n <= 1 + tiny.r(o.o_orderkey, 50, 7);

DROP FUNCTION tiny.r(bigint, int, bigint);
ANALYZE;
