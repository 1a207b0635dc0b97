import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type Database } from '../../src/platform/db/index.ts';
import type { CollectionReport } from '../../src/retrieval/lake-maintain.ts';
import { dropLakeSchema, lakeEnv, lakeTokens, runSchema } from '../support/lake.ts';
import { freshDatabase } from '../support/pg.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { runSvc } from '../support/svc-run.ts';
import { trinoStatement, trinoToken } from '../support/trino.ts';

// `svc lake maintain` (bin/svc, as the CronJob runs it) on the real servers: lake collections filled by uploads (one
// INSERT, one snapshot and small files each) and a delete (a position-delete file) are compacted and their snapshots
// expired, and answer the same questions the same way afterwards. The integration Trino lets maintenance keep
// nothing (scripts/start-trino.sh sets the catalog's minimum retentions to 0s), so `--retain 0s` leaves one snapshot.

const enc = (s: string) => new TextEncoder().encode(s);
const note = (topic: string, i: number) =>
  `${topic} note ${i}: the ${topic} team logged item ${i} at dawn, with term${i % 5} and term${(i * 3) % 7} beside it.`;
const QUESTIONS = [
  { question: 'harbour team logged item 3 at dawn', mode: 'dense' },
  { question: 'harbour term2 item', mode: 'keyword' },
  { question: 'billing team item 4', mode: 'hybrid' },
];

type Run = { code: number; stdout: string; stderr: string };
type Report = { retain: string; file_size_threshold: string; collections: CollectionReport[] };

describe('svc lake maintain (Trino, Iceberg, MinIO, Postgres)', () => {
  let h: RetrievalHarness;
  let db: Database;
  let ca: string;
  let drop: () => Promise<void>;
  let cliEnv: NodeJS.ProcessEnv;
  const SCHEMA = runSchema();
  const tableOf: Record<string, string> = {};

  beforeAll(async () => {
    const lake = await lakeEnv();
    ca = lake.ca;
    const fresh = await freshDatabase('lake_maintain');
    drop = fresh.drop;
    db = openPostgres(fresh.cfg);
    const env = { ...lake.env, SVC_RAG_LAKE_SCHEMA: SCHEMA };
    h = await retrievalHarness(db, { env, tokens: await lakeTokens([who.engineer.user]) });
    // the command as an operator runs it: the retrieval service's settings, its database and its lake
    cliEnv = {
      ...process.env,
      ...env,
      SVC_PG_HOST: fresh.cfg.host,
      SVC_PG_PORT: String(fresh.cfg.port),
      SVC_PG_USER: fresh.cfg.user,
      SVC_PG_PASSWORD: fresh.cfg.password,
      SVC_PG_DATABASE: fresh.cfg.database,
      SVC_LOG_LEVEL: 'warn',
    };
    for (const [slug, backend, documents] of [
      ['maint-lake', 'lake', 6],
      ['maint-other', 'lake', 2],
      ['maint-broken', 'lake', 1],
      ['maint-memory', 'memory', 1],
    ] as const) {
      const created = await h.json('POST', '/collections', who.engineer, { slug, name: slug, allowed_roles: [], backend });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      for (let i = 0; i < documents; i++) {
        const text = `${note(i % 2 ? 'billing' : 'harbour', i)} ${note('harbour', i + 10)}`;
        const up = await h.upload(slug, who.engineer, { name: `note-${i}.txt`, bytes: enc(text), type: 'text/plain' });
        expect(up.status, JSON.stringify(up.body)).toBe(201);
      }
      const [row] = await db.query<{ chunk_store: string }>(`SELECT chunk_store FROM retrieval_collections WHERE slug = $1`, [slug]);
      tableOf[slug] = row!.chunk_store;
    }
    // a delete: a position-delete file and one more snapshot
    const docs = (await h.json('GET', '/collections/maint-lake/documents', who.engineer)).body.documents;
    const gone = await h.json('DELETE', `/collections/maint-lake/documents/${docs[0].document_id}`, who.engineer);
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
  }, 600_000);

  afterAll(async () => {
    if (ca) await dropLakeSchema(SCHEMA, ca);
    await h?.close();
    await db?.close();
    await drop?.();
  }, 120_000);

  const maintain = (...args: string[]): Promise<Run> => runSvc(['lake', 'maintain', '--retain', '0s', '--json', ...args], cliEnv);
  const reportOf = (run: Run): Report => {
    expect(run.stdout, run.stderr).toMatch(/^\{/);
    return JSON.parse(run.stdout) as Report;
  };
  const snapshots = async (slug: string) => {
    const [catalog, schema] = SCHEMA.split('.');
    const res = await trinoStatement(
      `SELECT count(*) FROM ${catalog}.${schema}."${tableOf[slug]}$snapshots"`,
      await trinoToken('svc-service'),
      ca,
    );
    expect(res.error).toBeUndefined();
    return Number(res.rows[0]![0]);
  };
  const answers = async (slug: string) =>
    Promise.all(
      QUESTIONS.map(async (q) => {
        const res = await h.json('POST', `/collections/${slug}/query`, who.engineer, { ...q, top_k: 5 });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.chunks.length).toBeGreaterThan(0);
        return res.body.chunks;
      }),
    );

  it('compacts one collection to fewer files and one snapshot, answers the same after, and a second run changes nothing', async () => {
    const before = await answers('maint-lake');
    const otherSnapshots = await snapshots('maint-other');

    const run = await maintain('--collection', 'maint-lake');
    expect(run.code, run.stderr).toBe(0);
    const report = reportOf(run);
    expect(report).toMatchObject({ retain: '0s', file_size_threshold: '100MB' });
    expect(report.collections).toHaveLength(1);
    const done = report.collections[0]!;
    expect(done).toMatchObject({ collection: 'maint-lake', table: tableOf['maint-lake'], ok: true });
    if (!done.ok) throw new Error(done.error);
    // six uploads (a data file each), one delete (a delete file); seven snapshots and the table's creation
    expect(done.files.before).toBeGreaterThanOrEqual(7);
    expect(done.files.after).toBeLessThan(done.files.before);
    expect(done.snapshots.before).toBe(8);
    expect(done.snapshots.after).toBe(1);
    expect(done.seconds).toBeTypeOf('number');
    expect(await snapshots('maint-lake')).toBe(1);
    // the other collections were not touched
    expect(await snapshots('maint-other')).toBe(otherSnapshots);

    expect(await answers('maint-lake')).toEqual(before);

    const again = await maintain('--collection', 'maint-lake');
    expect(again.code, again.stderr).toBe(0);
    expect(reportOf(again).collections).toEqual([
      expect.objectContaining({
        collection: 'maint-lake',
        ok: true,
        files: { before: done.files.after, after: done.files.after },
        snapshots: { before: 1, after: 1 },
      }),
    ]);
    expect(await answers('maint-lake')).toEqual(before);
  }, 600_000);

  it('maintains every lake collection, reports one whose table is gone as failed, and exits 1 after the others ran', async () => {
    const [catalog, schema] = SCHEMA.split('.');
    const gone = await trinoStatement(`DROP TABLE ${catalog}.${schema}."${tableOf['maint-broken']}"`, await trinoToken('svc-service'), ca);
    expect(gone.error).toBeUndefined();

    const run = await maintain();
    expect(run.code, run.stderr).toBe(1);
    const { collections } = reportOf(run);
    // the lake collections in slug order, the memory one left out
    expect(collections.map((c) => [c.collection, c.ok])).toEqual([
      ['maint-broken', false],
      ['maint-lake', true],
      ['maint-other', true],
    ]);
    expect(collections[0]).toMatchObject({ table: tableOf['maint-broken'], error: expect.stringMatching(/does not exist|not found/i) });
    expect(collections[2]).toMatchObject({ snapshots: { before: 3, after: 1 } });
    expect(await snapshots('maint-other')).toBe(1);
  }, 600_000);

  it('names a collection that does not exist, or is not on the lake, and exits 1; the text report says what changed', async () => {
    const missing = await maintain('--collection', 'no-such-collection');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('svc: collection no-such-collection does not exist\n');
    const memory = await maintain('--collection', 'maint-memory');
    expect(memory.code).toBe(1);
    expect(memory.stderr).toBe('svc: collection maint-memory is on the memory backend, not the lake: it has no table to maintain\n');

    const text = await runSvc(['lake', 'maintain', '--retain', '0s', '--collection', 'maint-other'], cliEnv);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`^maint-other \\(${tableOf['maint-other']}\\): files \\d+ -> \\d+, snapshots \\d+ -> 1, [\\d.]+ s\\n$`),
    );
  }, 600_000);
});
