import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { TrinoError } from '../../src/platform/trino/index.ts';
import type { Lake } from '../../src/retrieval/backends/index.ts';
import { LakeMaintainError, maintainLake } from '../../src/retrieval/lake-maintain.ts';
import { retrievalService } from '../../src/retrieval/service.ts';
import { runSvc } from '../support/svc-run.ts';

// `svc lake maintain` where no Trino is needed: the command line's errors through bin/svc (exit 2 for a flag, 1 for a
// setting or a collection, one line naming it), and the maintenance itself over a scripted lake that records the
// statements (tests/integration/lake-maintain.test.ts runs it on the real Trino).
const SLOW = 180_000;

let parent: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'svc-cli-lake-'));
  // an embedded database holding one memory collection, as `svc db migrate` leaves it
  const db = await openPglite({ dataDir: join(parent, 'data', 'pglite'), inWorker: false });
  await retrievalService.migrate(db);
  await db.exec(`INSERT INTO retrieval_collections (slug, name, created_by) VALUES ('notes', 'Notes', 'eve')`);
  await db.close();
  env = { ...process.env, SVC_DATA_DIR: join(parent, 'data'), SVC_LOG_LEVEL: 'warn', SVC_TRINO_URL: 'https://127.0.0.1:9' };
  delete env.SVC_PG_HOST;
}, SLOW);
afterAll(() => rm(parent, { recursive: true, force: true }));

describe.concurrent('svc lake maintain, refused', () => {
  it.each([
    [['--retain', '7x'], 'svc: --retain 7x is not a duration (e.g. 7d, 12h, 30m)'],
    [['--retain', '-1d'], 'svc: --retain -1d is not a duration (e.g. 7d, 12h, 30m)'],
    [['--file-size-threshold', '100mb'], 'svc: --file-size-threshold 100mb is not a data size (e.g. 100MB, 512kB)'],
    [['--timeout', 'soon'], 'svc: --timeout soon is not a duration (e.g. 1h, 90m)'],
    [['--timeout', '0s'], 'svc: --timeout 0s must be longer than 0'],
    [['--retain'], 'svc: Not enough arguments following: retain'],
  ])(
    'svc lake maintain %j: exit 2, "%s", before the database opens',
    async (args, said) => {
      const dataDir = join(parent, `untouched-${args.join('')}`);
      const run = await runSvc(['lake', 'maintain', ...args], { ...env, SVC_DATA_DIR: dataDir });
      expect(run.stderr.split('\n')[0]).toBe(said);
      expect(run.code).toBe(2);
      expect(existsSync(dataDir)).toBe(false);
    },
    SLOW,
  );

  it(
    'without SVC_TRINO_URL: exit 1 naming the setting',
    async () => {
      const run = await runSvc(['lake', 'maintain'], { ...env, SVC_TRINO_URL: '' });
      expect(run.stderr).toBe(
        'svc: svc lake maintain needs SVC_TRINO_URL (and SVC_TRINO_SERVICE_TOKEN): the Trino of the lake collections\n',
      );
      expect(run.code).toBe(1);
    },
    SLOW,
  );

  it.each([
    ['no-such', 'svc: collection no-such does not exist'],
    ['notes', 'svc: collection notes is on the memory backend, not the lake: it has no table to maintain'],
  ])(
    '--collection %s: exit 1, "%s", and Trino is never asked',
    async (slug, said) => {
      // SVC_TRINO_URL points at a closed port: a statement sent there would fail the run another way
      const run = await runSvc(['lake', 'maintain', '--collection', slug], env);
      expect(run.stderr).toBe(`${said}\n`);
      expect(run.code).toBe(1);
    },
    SLOW,
  );
});

describe('maintainLake over a scripted lake', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite({ inWorker: false });
    await retrievalService.migrate(db);
    for (const [slug, table] of [
      ['b-docs', 'b_docs_1234abcd'],
      ['a-docs', 'a_docs_5678ef01'],
    ])
      await db.query(
        `INSERT INTO retrieval_collections (slug, name, created_by, backend, chunk_store) VALUES ($1, $1, 'eve', 'lake', $2)`,
        [slug, table],
      );
    await db.exec(`INSERT INTO retrieval_collections (slug, name, created_by) VALUES ('plain', 'Plain', 'eve')`);
  }, SLOW);
  afterAll(() => db?.close());

  /** A lake whose tables hold `files` files and `snapshots` snapshots until maintained (then 1 and 1); `fail` answers a statement with an error. */
  function scriptedLake(fail?: (statement: string) => Error | undefined) {
    const statements: string[] = [];
    const maintained = new Set<string>();
    const lake = {
      settings: { schema: 'iceberg.retrieval' },
      async asService(statement: string) {
        statements.push(statement);
        const error = fail?.(statement);
        if (error) throw error;
        const table = /"(\w+_[0-9a-f]{8})/.exec(statement)![1]!;
        if (statement.startsWith('ALTER')) maintained.add(table);
        const n = statement.includes('$files"') ? 9 : 5;
        return { columns: [], rows: [[maintained.has(table) ? 1 : n]] };
      },
    } as unknown as Lake;
    return { lake, statements };
  }
  const opts = { retain: '7d', fileSizeThreshold: '100MB' };

  it('runs optimize, expire_snapshots and remove_orphan_files on every lake collection in slug order, counting before and after', async () => {
    const { lake, statements } = scriptedLake();
    const seen: string[] = [];
    const reports = await maintainLake({ db, lake }, opts, (r) => seen.push(r.collection));
    expect(reports.map((r) => ({ ...r, seconds: 0 }))).toEqual([
      {
        collection: 'a-docs',
        table: 'a_docs_5678ef01',
        ok: true,
        files: { before: 9, after: 1 },
        snapshots: { before: 5, after: 1 },
        seconds: 0,
      },
      {
        collection: 'b-docs',
        table: 'b_docs_1234abcd',
        ok: true,
        files: { before: 9, after: 1 },
        snapshots: { before: 5, after: 1 },
        seconds: 0,
      },
    ]);
    expect(seen).toEqual(['a-docs', 'b-docs']);
    expect(statements.slice(0, 7)).toEqual([
      'SELECT count(*) FROM "iceberg"."retrieval"."a_docs_5678ef01$files"',
      'SELECT count(*) FROM "iceberg"."retrieval"."a_docs_5678ef01$snapshots"',
      `ALTER TABLE "iceberg"."retrieval"."a_docs_5678ef01" EXECUTE optimize(file_size_threshold => '100MB')`,
      `ALTER TABLE "iceberg"."retrieval"."a_docs_5678ef01" EXECUTE expire_snapshots(retention_threshold => '7d')`,
      `ALTER TABLE "iceberg"."retrieval"."a_docs_5678ef01" EXECUTE remove_orphan_files(retention_threshold => '7d')`,
      'SELECT count(*) FROM "iceberg"."retrieval"."a_docs_5678ef01$files"',
      'SELECT count(*) FROM "iceberg"."retrieval"."a_docs_5678ef01$snapshots"',
    ]);
    expect(statements).toHaveLength(14);
  });

  it('reports a collection whose statement fails, and still maintains the next', async () => {
    const { lake } = scriptedLake((s) =>
      s.includes('a_docs') && s.includes('optimize')
        ? new TrinoError('unavailable', 'Trino failed the query (GENERIC_INTERNAL_ERROR): boom')
        : undefined,
    );
    const reports = await maintainLake({ db, lake }, opts);
    expect(reports.map((r) => [r.collection, r.ok])).toEqual([
      ['a-docs', false],
      ['b-docs', true],
    ]);
    expect(reports[0]).toMatchObject({ error: 'Trino failed the query (GENERIC_INTERNAL_ERROR): boom' });
  });

  it("stops at a retention below the catalog's floor, naming --retain, the settings and Trino's words", async () => {
    const refusal = 'Retention specified (1.00h) is shorter than the minimum retention configured in the system (7.00d)';
    const { lake, statements } = scriptedLake((s) =>
      s.includes('expire_snapshots') ? new TrinoError('invalid', refusal, 'INVALID_PROCEDURE_ARGUMENT') : undefined,
    );
    const err = await maintainLake({ db, lake }, { ...opts, retain: '1h' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LakeMaintainError);
    expect(err).toMatchObject({ kind: 'retention-refused' });
    expect((err as Error).message).toBe(
      '--retain 1h is shorter than the catalog allows (its iceberg.expire-snapshots.min-retention and ' +
        `iceberg.remove-orphan-files.min-retention, 7d unless set): ${refusal}`,
    );
    // the second collection was not tried
    expect(statements.some((s) => s.includes('b_docs'))).toBe(false);
  });

  it('maintains only the collection named, and refuses one that is not on the lake', async () => {
    const { lake } = scriptedLake();
    expect((await maintainLake({ db, lake }, { ...opts, collection: 'b-docs' })).map((r) => r.collection)).toEqual(['b-docs']);
    await expect(maintainLake({ db, lake }, { ...opts, collection: 'plain' })).rejects.toMatchObject({ kind: 'not-lake' });
    await expect(maintainLake({ db, lake }, { ...opts, collection: 'gone' })).rejects.toMatchObject({ kind: 'unknown-collection' });
  });
});
