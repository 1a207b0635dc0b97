import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  copyInput,
  copyInt8,
  int4Field,
  textField,
  uuidField,
  type CopyField,
  type CopyOutOptions,
  isUniqueViolation,
  migrate,
  migratePlatform,
  readCopyRows,
  sqlLiteral,
  sqlState,
  toVector,
  type Database,
} from '../../src/platform/db/index.ts';

type Opened = { db: Database; cleanup(): Promise<void> };

// What every SQL adapter must do identically; run on PGlite (unit) and on a real PostgreSQL (integration).
// `open` gives a new, empty database each call.
export function dbContract(label: string, open: () => Promise<Opened>) {
  describe(`SQL port (${label})`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ db, cleanup } = await open());
      await migratePlatform(db);
    });
    afterAll(async () => cleanup?.());

    describe('migrations', () => {
      it('the platform set installs pgvector, once', async () => {
        expect(await db.query(`SELECT extname FROM pg_extension WHERE extname = 'vector'`)).toEqual([{ extname: 'vector' }]);
        expect(await migratePlatform(db)).toEqual([]);
      });

      it('applies pending migrations in order, records them, and a second run is a no-op', async () => {
        const set = [
          { id: '001_a', sql: 'CREATE TABLE m1 (x int); CREATE TABLE m2 (y int);' },
          { id: '002_b', sql: 'ALTER TABLE m1 ADD COLUMN z text;' },
        ];
        expect(await migrate(db, 'contract', set.slice(0, 1))).toEqual(['001_a']);
        expect(await migrate(db, 'contract', set)).toEqual(['002_b']);
        expect(await migrate(db, 'contract', set)).toEqual([]);
        const rows = await db.query<{ id: string; applied_at: Date }>(
          `SELECT id, applied_at FROM svc_migrations WHERE namespace = 'contract' ORDER BY id`,
        );
        expect(rows.map((r) => r.id)).toEqual(['001_a', '002_b']);
        expect(rows[0]!.applied_at).toBeInstanceOf(Date);
        // Another namespace may reuse an id.
        expect(await migrate(db, 'other', [{ id: '001_a', sql: 'CREATE TABLE o1 (x int);' }])).toEqual(['001_a']);
      });

      it('a failing migration names itself, leaves nothing behind and stops the ones after it', async () => {
        const set = [
          { id: '001_ok', sql: 'CREATE TABLE f_ok (x int);' },
          { id: '002_bad', sql: 'CREATE TABLE f_half (x int); SELECT no_such_column FROM f_ok;' },
          { id: '003_next', sql: 'CREATE TABLE f_next (x int);' },
        ];
        await expect(migrate(db, 'failing', set)).rejects.toThrow(/migration failing\/002_bad failed: .*no_such_column/);
        const tables = await db.query<{ name: string }>(
          `SELECT table_name AS name FROM information_schema.tables WHERE table_name LIKE 'f\\_%' ORDER BY 1`,
        );
        expect(tables.map((t) => t.name)).toEqual(['f_ok']);
        expect(await db.query(`SELECT id FROM svc_migrations WHERE namespace = 'failing'`)).toEqual([{ id: '001_ok' }]);
      });

      it('refuses a set that lists an id twice', async () => {
        const twice = [
          { id: 'a', sql: 'SELECT 1' },
          { id: 'a', sql: 'SELECT 2' },
        ];
        await expect(migrate(db, 'dup', twice)).rejects.toThrow('migration dup/a is listed twice');
      });

      it('racing migrators on a brand-new database apply each migration exactly once', async () => {
        const fresh = await open();
        try {
          // The sleep widens the window in which an unserialised migrator would apply the same migration twice.
          const set = [
            { id: '001', sql: 'CREATE TABLE raced (x int); SELECT pg_sleep(0.2);' },
            { id: '002', sql: 'INSERT INTO raced VALUES (1);' },
          ];
          const results = await Promise.all([1, 2, 3].map(() => migrate(fresh.db, 'race', set)));
          expect(results.flat().sort()).toEqual(['001', '002']);
          expect(await fresh.db.query('SELECT x FROM raced')).toEqual([{ x: 1 }]);
        } finally {
          await fresh.cleanup();
        }
      });
    });

    describe('transactions', () => {
      let n = 0;
      /** A table of its own for each test, so no test depends on another's rows. */
      const table = async (rows: number[] = []) => {
        const name = `tx_${++n}`;
        await db.exec(`CREATE TABLE ${name} (x int)`);
        for (const x of rows) await db.query(`INSERT INTO ${name} VALUES ($1)`, [x]);
        return name;
      };

      it('commits and returns what the callback returns', async () => {
        const t = await table();
        const rows = await db.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${t} VALUES ($1)`, [1]);
          return tx.query<{ x: number }>(`SELECT x FROM ${t}`);
        });
        expect(rows).toEqual([{ x: 1 }]);
        expect(await db.query(`SELECT x FROM ${t}`)).toEqual([{ x: 1 }]);
      });

      it('rolls back everything when the callback throws, and no one sees the rows meanwhile', async () => {
        const t = await table([1]);
        let inside!: () => void;
        const written = new Promise<void>((resolve) => (inside = resolve));
        const failing = db.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${t} VALUES ($1), ($2)`, [2, 3]);
          inside();
          await new Promise((r) => setTimeout(r, 50));
          throw new Error('abort');
        });
        await written;
        const meanwhile = db.query<{ n: number }>(`SELECT count(*) AS n FROM ${t} WHERE x > 1`);
        await expect(failing).rejects.toThrow('abort');
        expect(await meanwhile).toEqual([{ n: 0 }]);
        expect(await db.query(`SELECT x FROM ${t} ORDER BY x`)).toEqual([{ x: 1 }]);
      });

      it('a database error inside rolls back the earlier statements', async () => {
        const t = await table();
        const attempt = db.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${t} VALUES (10)`);
          await tx.query(`INSERT INTO ${t} VALUES ($1)`, ['not a number']);
        });
        await expect(attempt).rejects.toThrow(/invalid input syntax/);
        expect(await db.query(`SELECT x FROM ${t}`)).toEqual([]);
      });

      it('concurrent read-modify-write transactions do not lose updates', async () => {
        const t = await table([0]);
        await Promise.all(
          Array.from({ length: 10 }, () =>
            db.transaction(async (tx) => {
              const [row] = await tx.query<{ x: number }>(`SELECT x FROM ${t} FOR UPDATE`);
              await tx.query(`UPDATE ${t} SET x = $1`, [row!.x + 1]);
            }),
          ),
        );
        expect(await db.query(`SELECT x FROM ${t}`)).toEqual([{ x: 10 }]);
      });

      it('concurrent queries outside a transaction each get their own answer', async () => {
        const results = await Promise.all(Array.from({ length: 30 }, (_, i) => db.query<{ x: number }>('SELECT $1::int AS x', [i])));
        expect(results.map((r) => r[0]!.x)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      });
    });

    describe('values', () => {
      it('returns the same JavaScript types on every adapter', async () => {
        const [row] = await db.query(
          `SELECT count(*) AS n, 9007199254740993::int8 AS big, 2.5::numeric AS num, 1.25::float8 AS f, 7::int2 AS small,
                  true AS b, '2026-01-02T03:04:05Z'::timestamptz AS ts, '2026-01-02 03:04:05'::timestamp AS wall,
                  '2026-01-02'::date AS day, $1::jsonb AS j, ARRAY['a','b'] AS arr, ARRAY[1,2]::int8[] AS ids,
                  '[1,2,3]'::vector AS v, $2::text AS t, '\\x01ff'::bytea AS bin, $3::bytea AS bin2,
                  $4::text AS missing, NULL::int AS nothing, $5::timestamptz AS param_ts`,
          [JSON.stringify({ a: [1, 'x'] }), 'héllo', new Uint8Array([7, 8]), undefined, new Date('2026-03-04T05:06:07.089Z')],
        );
        expect(row).toStrictEqual({
          n: 1,
          big: 9007199254740993n,
          num: 2.5,
          f: 1.25,
          small: 7,
          b: true,
          ts: new Date('2026-01-02T03:04:05Z'),
          wall: new Date('2026-01-02T03:04:05Z'),
          day: new Date('2026-01-02T00:00:00Z'),
          j: { a: [1, 'x'] },
          arr: ['a', 'b'],
          ids: [1, 2],
          v: '[1,2,3]',
          t: 'héllo',
          bin: new Uint8Array([1, 255]),
          bin2: new Uint8Array([7, 8]),
          missing: null,
          nothing: null,
          param_ts: new Date('2026-03-04T05:06:07.089Z'),
        });
      });

      it('takes a list as a typed array parameter and a document as JSON text', async () => {
        const rows = await db.query<{ x: string }>('SELECT x FROM unnest($1::text[]) AS x WHERE x = ANY($2::text[]) ORDER BY x', [
          ['a', 'b', 'c'],
          ['c', 'a'],
        ]);
        expect(rows).toEqual([{ x: 'a' }, { x: 'c' }]);
        const [doc] = await db.query<{ k: string }>(`SELECT $1::jsonb ->> 'k' AS k`, [JSON.stringify({ k: 'v' })]);
        expect(doc).toEqual({ k: 'v' });
      });

      it('query runs one statement; exec runs a script', async () => {
        await expect(db.query('SELECT 1; SELECT 2')).rejects.toThrow();
        await db.exec('CREATE TABLE script_a (x int); INSERT INTO script_a VALUES (1); INSERT INTO script_a VALUES (2);');
        expect(await db.query<{ n: number }>('SELECT count(*) AS n FROM script_a')).toEqual([{ n: 2 }]);
      });

      it('reports the SQLSTATE of a database error', async () => {
        await db.exec('CREATE TABLE uniq (k text PRIMARY KEY)');
        await db.query('INSERT INTO uniq VALUES ($1)', ['a']);
        const err = await db.query('INSERT INTO uniq VALUES ($1)', ['a']).catch((e: unknown) => e);
        expect(isUniqueViolation(err)).toBe(true);
        expect(sqlState(await db.query('SELECT 1 / 0').catch((e: unknown) => e))).toBe('22012');
        expect(sqlState(new Error('plain'))).toBeUndefined();
      });
    });

    describe('pgvector', () => {
      const dims = 768;
      const basis = (i: number, j: number, w = 0.5) => Array.from({ length: dims }, (_, k) => (k === i ? 1 : k === j ? w : 0));
      const query = toVector(basis(0, 7, -1));
      const ranked = (tx: { query: Database['query'] }) =>
        tx.query<{ id: number; d: number }>('SELECT id, embedding <=> $1::vector AS d FROM vecs ORDER BY d, id LIMIT 3', [query]);

      beforeAll(async () => {
        await db.exec(`CREATE TABLE vecs (id int PRIMARY KEY, embedding vector(${dims}) NOT NULL)`);
        const rows: [number, number[]][] = [
          [1, basis(2, 3)],
          [2, basis(0, 1)], // nearest (0.37): shares the first axis, orthogonal elsewhere
          [3, basis(0, 7)], // 0.68: shares the first axis, partly opposed on the second
          [4, basis(9, 0, 0.1)], // 0.93
          [5, basis(7, 1)], // 1.63: opposed
        ];
        for (const [id, v] of rows) await db.query('INSERT INTO vecs VALUES ($1, $2::vector)', [id, toVector(v)]);
      });

      it('stores 768-dimension vectors and ranks them by cosine distance', async () => {
        const exact = await ranked(db);
        expect(exact.map((r) => r.id)).toEqual([2, 3, 4]);
        expect(exact[0]!.d).toBeCloseTo(1 - 1 / (Math.sqrt(1.25) * Math.sqrt(2)), 6);
        const [dim] = await db.query<{ n: number }>('SELECT vector_dims(embedding) AS n FROM vecs WHERE id = 1');
        expect(dim).toEqual({ n: dims });
        await expect(db.query('INSERT INTO vecs VALUES (9, $1::vector)', [toVector([1, 2, 3])])).rejects.toThrow(/dimensions/);
      });

      it('builds an HNSW cosine index that the planner uses and that ranks the same', async () => {
        await db.exec('CREATE INDEX vecs_hnsw ON vecs USING hnsw (embedding vector_cosine_ops)');
        const [viaIndex, plan] = await db.transaction(async (tx) => {
          await tx.exec('SET LOCAL enable_seqscan = off');
          const plan = await tx.query<Record<string, string>>('EXPLAIN SELECT id FROM vecs ORDER BY embedding <=> $1::vector LIMIT 3', [
            query,
          ]);
          return [await ranked(tx), plan.map((r) => Object.values(r)[0]).join('\n')] as const;
        });
        expect(plan).toMatch(/Index Scan using vecs_hnsw/);
        expect(viaIndex.map((r) => r.id)).toEqual([2, 3, 4]);
      });
    });

    describe('binary COPY out', () => {
      it('reads rows of every size in binary form, and the database answers queries after each', async () => {
        // 1 to 1500 rows of 780 bytes: below, across and above a stream's 16 KiB and a socket read's 64 KiB
        for (const n of [0, 1, 20, 40, 60, 90, 200, 1500]) {
          const seen: number[] = [];
          const rows = await readCopyRows(
            db,
            `SELECT g::int8, decode(repeat('ab', 780), 'hex') FROM generate_series(1, ${n}) g`,
            ([g, bytes]) => {
              expect(bytes!.length).toBe(780);
              seen.push(copyInt8(g!));
            },
          );
          expect(rows).toBe(n);
          expect(seen).toEqual(Array.from({ length: n }, (_, i) => i + 1));
          expect(await Promise.all([db.query('SELECT 1 AS one'), db.query('SELECT 2 AS two')])).toEqual([[{ one: 1 }], [{ two: 2 }]]);
        }
        await expect(readCopyRows(db, `SELECT 1 / (g - 3) FROM generate_series(1, 5) g`, () => {})).rejects.toThrow(/division by zero/);
        await expect(readCopyRows(db, `SELECT nothing FROM nowhere`, () => {})).rejects.toThrow(/nowhere/);
        await expect(readCopyRows(db, `SELECT ${sqlLiteral("it's")}::text`, () => {})).resolves.toBe(1);
        expect(await db.query('SELECT 3 AS three')).toEqual([{ three: 3 }]);
      });

      it("runs with the settings given on Postgres, where the COPY has its connection, and leaves the pool's as they were", async () => {
        const setting = async (options?: CopyOutOptions) => {
          let value = '';
          await readCopyRows(db, `SELECT current_setting('enable_sort')`, ([v]) => (value = new TextDecoder().decode(v!)), options);
          return value;
        };
        expect(await setting({ settings: { enable_sort: 'off' } })).toBe(db.kind === 'postgres' ? 'off' : 'on');
        expect(await setting()).toBe('on');
        expect(await db.query(`SELECT current_setting('enable_sort') AS s`)).toEqual([{ s: 'on' }]);
      });
    });

    describe('binary COPY in', () => {
      beforeAll(async () => {
        await db.exec(`CREATE TABLE copied (id uuid PRIMARY KEY, n int NOT NULL, label text, v vector, raw bytea)`);
      });
      const uuid = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
      const vector = (values: number[]) => {
        const b = new DataView(new ArrayBuffer(4 + 4 * values.length));
        b.setInt16(0, values.length);
        for (const [i, x] of values.entries()) b.setFloat32(4 + 4 * i, x);
        return new Uint8Array(b.buffer);
      };
      const row = (i: number, label: string | null = `row ${i}`): CopyField[] => [
        uuidField(uuid(i)),
        int4Field(i - 2),
        label === null ? null : textField(label),
        vector([i, -0.1, 1e-30]),
        new Uint8Array([i % 256, 0, 255]),
      ];
      const target = 'copied (id, n, label, v, raw)';

      it('writes rows of every type exactly, in pieces, and the database answers queries after', async () => {
        await db.copyIn(target, copyInput([row(1), row(2, null), row(3, "Präsentation – 日本語 \\ 'quoted'\n")]));
        expect(await db.query(`SELECT id, n, label, v::text AS v, raw FROM copied ORDER BY n`)).toEqual([
          { id: uuid(1), n: -1, label: 'row 1', v: '[1,-0.1,1e-30]', raw: new Uint8Array([1, 0, 255]) },
          { id: uuid(2), n: 0, label: null, v: '[2,-0.1,1e-30]', raw: new Uint8Array([2, 0, 255]) },
          { id: uuid(3), n: 1, label: "Präsentation – 日本語 \\ 'quoted'\n", v: '[3,-0.1,1e-30]', raw: new Uint8Array([3, 0, 255]) },
        ]);
        // 3000 rows of about 3 KiB arrive as many pieces; read from a generator as the database takes them
        let made = 0;
        const many = function* () {
          for (let i = 10; i < 3010; i++, made++) yield [uuidField(uuid(i)), int4Field(i), textField('x'.repeat(3000)), null, null];
        };
        await db.copyIn(target, copyInput(many()));
        expect(made).toBe(3000);
        expect(await db.query(`SELECT count(*)::int AS n, sum(length(label))::int AS chars FROM copied WHERE n >= 10`)).toEqual([
          { n: 3000, chars: 9_000_000 },
        ]);
        expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      });

      it('commits and rolls back with its transaction', async () => {
        await db.transaction((tx) => tx.copyIn(target, copyInput([row(5000)])));
        await expect(
          db.transaction(async (tx) => {
            await tx.copyIn(target, copyInput([row(5001)]));
            throw new Error('changed my mind');
          }),
        ).rejects.toThrow('changed my mind');
        expect(await db.query(`SELECT n FROM copied WHERE n >= 4998 ORDER BY n`)).toEqual([{ n: 4998 }]);
      });

      it('a row the database refuses rejects with its error, keeps no row of the COPY, and the database goes on', async () => {
        const before = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM copied`);
        // a duplicate key, found only once the input has ended
        await expect(db.copyIn(target, copyInput([row(6000), row(6000)]))).rejects.toSatisfy((e) => sqlState(e) === '23505');
        await expect(db.transaction((tx) => tx.copyIn(target, copyInput([row(6001), row(1)])))).rejects.toSatisfy((e) =>
          isUniqueViolation(e),
        );
        // a NULL where the column refuses one; a table that does not exist
        const noNumber = [uuidField(uuid(6002)), null, null, null, null];
        await expect(db.copyIn(target, copyInput([noNumber]))).rejects.toSatisfy((e) => sqlState(e) === '23502');
        await expect(db.copyIn('nowhere (id)', copyInput([]))).rejects.toThrow(/nowhere/);
        // input that fails while it is read: that error, and the rows before it are not kept
        const failing = function* () {
          yield row(6003);
          throw new Error('the input broke');
        };
        await expect(db.copyIn(target, copyInput(failing()))).rejects.toThrow('the input broke');
        expect(await db.query(`SELECT count(*)::int AS n FROM copied`)).toEqual(before);
        expect(await Promise.all([db.query('SELECT 1 AS one'), db.query('SELECT 2 AS two')])).toEqual([[{ one: 1 }], [{ two: 2 }]]);
      });
    });

    describe('readiness', () => {
      it('ping is true while open and false once closed, without throwing', async () => {
        const other = await open();
        try {
          expect(await other.db.ping()).toBe(true);
          await other.db.close();
          expect(await other.db.ping()).toBe(false);
          await other.db.close(); // idempotent
        } finally {
          await other.cleanup();
        }
      });
    });
  });
}
