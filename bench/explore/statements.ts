// The statements bench/explore/trino.ts times; tests/integration/explore-cost-trino.test.ts proves the cost gate's
// bound on them as well.
export const STATEMENTS = [
  'SELECT count(*) AS orders FROM tpch.tiny.orders',
  'SELECT n.n_name AS nation, count(*) AS customers FROM tpch.tiny.customer c JOIN tpch.tiny.nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name',
  'SELECT o_orderpriority, sum(o_totalprice) AS total FROM tpch.tiny.orders GROUP BY o_orderpriority ORDER BY total DESC',
];

/** The question bench/explore/trino.ts asks for each statement: it names what the statement reads, as a user's would. */
export const QUESTIONS = ['how many orders are there', 'how many customers per nation', 'total price of orders by priority'];
