import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';

// An in-memory embedded database starts from the cached tarball of a new cluster (pglite-prepared.mjs): the first
// open writes it under $SVC_CACHE/pglite, later opens load it, and a tarball that cannot be loaded is replaced.

// Each test runs initdb once or twice (tens of seconds on a busy two-core machine).
describe('the prepared cluster of an in-memory database', { timeout: 120_000 }, () => {
  let cache: string;
  const saved = process.env.SVC_CACHE;
  const tarballs = async () => (await readdir(join(cache, 'pglite')).catch(() => [])).filter((f) => f.endsWith('.tar'));

  beforeAll(async () => {
    cache = await mkdtemp(join(tmpdir(), 'svc-prepared-'));
    process.env.SVC_CACHE = cache; // read by the database worker when it starts
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.SVC_CACHE;
    else process.env.SVC_CACHE = saved;
    await rm(cache, { recursive: true, force: true });
  });

  it('is written by the first open and gives every later open a new, empty cluster', async () => {
    const first = await openPglite({});
    await first.exec('CREATE TABLE kept_by_no_one (x int); INSERT INTO kept_by_no_one VALUES (1)');
    await first.close();
    expect(await tarballs()).toHaveLength(1);

    const second = await openPglite({});
    const tables = await second.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'kept_by_no_one'`);
    expect(tables[0]!.n).toBe(0);
    await second.exec('CREATE EXTENSION IF NOT EXISTS vector');
    expect(await second.query<{ d: number }>(`SELECT '[3,4]'::vector <-> '[0,0]'::vector AS d`)).toEqual([{ d: 5 }]);
    await second.close();
  });

  it('starts a new data folder from it, and a folder that holds a cluster opens with what was written', async () => {
    const folder = join(cache, 'data');
    const fresh = await openPglite({ dataDir: folder });
    await fresh.exec('CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)');
    await fresh.close();
    expect(await readdir(folder)).toContain('PG_VERSION');

    const reopened = await openPglite({ dataDir: folder });
    expect(await reopened.query('SELECT x FROM kept')).toEqual([{ x: 7 }]);
    await reopened.close();
    expect(await tarballs()).toHaveLength(1);
  });

  it('replaces a tarball that cannot be loaded, and still opens', async () => {
    const [name] = await tarballs();
    const file = join(cache, 'pglite', name!);
    await writeFile(file, 'not a tarball');
    const db = await openPglite({});
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await db.close();
    expect((await stat(file)).size).toBeGreaterThan(1_000_000);
    expect((await readFile(file)).subarray(0, 13).toString()).not.toBe('not a tarball');
  });
});
