import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migratePlatform, toVector, type Database } from '../../src/platform/db/index.ts';

// What every SQL adapter must do identically; run on PGlite (unit) and on real Postgres (integration).
export function dbContract(label: string, open: () => Promise<{ db: Database; cleanup(): Promise<void> }>) {
  describe(`SQL port (${label})`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ db, cleanup } = await open());
      await migratePlatform(db);
    });
    afterAll(async () => cleanup?.());

    it('applies a migration once, and again is a no-op', async () => {
      const set = [{ id: '001', sql: 'CREATE TABLE m1 (x int); CREATE TABLE m2 (y int);' }];
      expect(await migrate(db, 'contract', set)).toEqual(['001']);
      expect(await migrate(db, 'contract', set)).toEqual([]);
      expect(await db.query(`SELECT id FROM svc_migrations WHERE namespace = 'contract'`)).toEqual([{ id: '001' }]);
    });

    it('does not apply a migration twice when two migrators race', async () => {
      const set = [{ id: '001', sql: 'CREATE TABLE raced (x int);' }];
      const results = await Promise.all([migrate(db, 'race', set), migrate(db, 'race', set), migrate(db, 'race', set)]);
      expect(results.flat()).toEqual(['001']);
    });

    it('rolls a failed transaction back entirely', async () => {
      await db.exec('CREATE TABLE tx_test (x int)');
      await expect(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO tx_test VALUES ($1)', [1]);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(await db.query('SELECT * FROM tx_test')).toEqual([]);
      await db.transaction(async (tx) => tx.query('INSERT INTO tx_test VALUES ($1)', [2]));
      expect(await db.query('SELECT x FROM tx_test')).toEqual([{ x: 2 }]);
    });

    it('returns the same JavaScript types on every adapter', async () => {
      const [row] = await db.query<Record<string, unknown>>(
        `SELECT count(*) AS n, 9007199254740993::int8 AS big, 2.5::numeric AS num, 1.25::float8 AS f,
                true AS b, '2026-01-02T03:04:05Z'::timestamptz AS ts, $1::jsonb AS j, ARRAY['a','b'] AS arr,
                '[1,2,3]'::vector AS v, $2::text AS t`,
        [JSON.stringify({ a: [1, 'x'] }), 'héllo'],
      );
      expect(row).toEqual({
        n: 1,
        big: 9007199254740993n,
        num: 2.5,
        f: 1.25,
        b: true,
        ts: new Date('2026-01-02T03:04:05Z'),
        j: { a: [1, 'x'] },
        arr: ['a', 'b'],
        v: '[1,2,3]',
        t: 'héllo',
      });
    });

    it('stores 768-dimension vectors and ranks them by cosine, with and without an HNSW index', async () => {
      await db.exec('CREATE TABLE vecs (id int PRIMARY KEY, embedding vector(768))');
      const basis = (i: number, j: number) => Array.from({ length: 768 }, (_, k) => (k === i ? 1 : k === j ? 0.5 : 0));
      const rows = [
        [1, basis(0, 1)],
        [2, basis(2, 3)],
        [3, basis(0, 5)],
        [4, basis(9, 0)],
      ] as const;
      for (const [id, v] of rows) await db.query('INSERT INTO vecs VALUES ($1, $2::vector)', [id, toVector(v)]);
      const q = toVector(basis(0, -1));
      const ranked = () => db.query<{ id: number; d: number }>('SELECT id, embedding <=> $1::vector AS d FROM vecs ORDER BY d, id', [q]);
      const exact = await ranked();
      expect(exact.map((r) => r.id)).toEqual([1, 3, 4, 2]);
      expect(exact[0]!.d).toBeCloseTo(1 - 1 / Math.sqrt(1.25), 6);
      await db.exec('CREATE INDEX vecs_hnsw ON vecs USING hnsw (embedding vector_cosine_ops)');
      expect((await ranked()).map((r) => r.id)).toEqual([1, 3, 4, 2]);
    });

    it('answers concurrent queries outside a transaction', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => db.query<{ x: number }>('SELECT $1::int AS x', [i])));
      expect(results.map((r) => r[0]!.x)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    });
  });
}
