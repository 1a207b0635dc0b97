// The peer's data for bench/retrieval: tables of unit vectors of 768 dimensions with pgvector HNSW indexes, kept in
// their own database (svc_bench_retrieval) so a run reuses what an earlier run built: a million-row HNSW build takes
// tens of minutes on 2 cores. Each table is made once, on the server, and its build time is recorded beside it.
//   random     components uniform in [-0.5, 0.5], scaled to length 1 (no structure: the hard case for HNSW)
//   clustered  a Gaussian mixture: 1000 random unit centres, each row a centre plus Gaussian noise of length about
//              0.5, scaled to length 1 (neighbours are close and few: where HNSW is at its best)
// Run alone to prepare: npx tsx bench/retrieval/datasets.ts random:1000000 clustered:1000000
import { openPostgres, type Database } from '../../src/platform/db/index.ts';
import { ensurePostgres, realPgConfig } from '../../tests/support/pg.ts';

export const DIM = 768;
export const CENTRES = 1000;
export const NOISE = 0.5 / Math.sqrt(DIM); // per component: the noise vector's length is about 0.5
export const BENCH_DATABASE = 'svc_bench_retrieval';
export type Distribution = 'random' | 'clustered';

export const peerTable = (dist: Distribution, n: number) => `peer_${dist}_${n}`;

/** The kept benchmark database, created on first use with pgvector. */
export async function openBenchDatabase(): Promise<Database> {
  await ensurePostgres();
  const admin = openPostgres({ ...realPgConfig('postgres'), max: 1 });
  try {
    const found = await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [BENCH_DATABASE]);
    if (found.length === 0) await admin.exec(`CREATE DATABASE ${BENCH_DATABASE}`);
  } finally {
    await admin.close();
  }
  // filling a million rows takes minutes a statement on a loaded machine: no statement time limit here
  const db = openPostgres({ ...realPgConfig(BENCH_DATABASE), max: 4, statementTimeoutMs: 0 });
  await db.exec(`CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE IF NOT EXISTS peer_builds (name text PRIMARY KEY, rows int NOT NULL, fill_seconds float8 NOT NULL,
      hnsw_seconds float8, built_at timestamptz NOT NULL DEFAULT now())`);
  return db;
}

export type Dataset = { table: string; fillSeconds: number; hnswSeconds: number; reused: boolean };

/** Whether an earlier run finished the table of `n` rows of `dist` and its HNSW index. */
export async function datasetBuilt(db: Database, dist: Distribution, n: number): Promise<boolean> {
  const done = await db.query(`SELECT 1 FROM peer_builds WHERE name = $1 AND rows = $2 AND hnsw_seconds IS NOT NULL`, [
    peerTable(dist, n),
    n,
  ]);
  return done.length > 0;
}

/**
 * The table of `n` rows of `dist` with its HNSW index, made now unless an earlier run finished it; `hnsw: false` for a
 * run that needs only the rows (pgvector's exact scan): the index is built by the next run that needs it.
 */
export async function ensureDataset(
  db: Database,
  dist: Distribution,
  n: number,
  log = console.log,
  opts = { hnsw: true },
): Promise<Dataset> {
  const table = peerTable(dist, n);
  const [done] = await db.query<{ fill_seconds: number; hnsw_seconds: number | null }>(
    `SELECT fill_seconds, hnsw_seconds FROM peer_builds WHERE name = $1 AND rows = $2`,
    [table, n],
  );
  if (done?.hnsw_seconds != null) return { table, fillSeconds: done.fill_seconds, hnswSeconds: done.hnsw_seconds, reused: true };
  if (done && !opts.hnsw) return { table, fillSeconds: done.fill_seconds, hnswSeconds: Number.NaN, reused: true };

  let fillSeconds = done?.fill_seconds;
  if (fillSeconds === undefined) {
    log(`${table}: generating ${n} vectors on the server`);
    const started = performance.now();
    await db.exec(`DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} (seq int PRIMARY KEY, embedding vector(${DIM}) NOT NULL)`);
    if (dist === 'clustered') await ensureCentres(db);
    const batch = 50_000;
    for (let from = 1; from <= n; from += batch) {
      const to = Math.min(n, from + batch - 1);
      // setseed per batch: the same rows on every machine, whatever the batch that failed and was redone
      await db.transaction(async (tx) => {
        await tx.query(`SELECT setseed($1)`, [((dist === 'random' ? 0.25 : 0.75) * from) / n / 2]);
        await tx.exec(
          dist === 'random'
            ? `INSERT INTO ${table} SELECT g, l2_normalize((SELECT array_agg(random() - 0.5) FROM generate_series(1, ${DIM}) WHERE g IS NOT NULL)::vector)
               FROM generate_series(${from}, ${to}) g`
            : `INSERT INTO ${table} SELECT g, l2_normalize(c.v + (SELECT array_agg(${NOISE} * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))
                 FROM generate_series(1, ${DIM}) WHERE g IS NOT NULL)::vector)
               FROM generate_series(${from}, ${to}) g JOIN peer_centres c ON c.c = g % ${CENTRES}`,
        );
      });
      if (to % 200_000 === 0 || to === n) log(`${table}: ${to} rows, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    await db.exec(`VACUUM ANALYZE ${table}`);
    fillSeconds = (performance.now() - started) / 1000;
    await db.query(
      `INSERT INTO peer_builds (name, rows, fill_seconds) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET rows = $2, fill_seconds = $3, hnsw_seconds = NULL, built_at = now()`,
      [table, n, fillSeconds],
    );
  }

  if (!opts.hnsw) return { table, fillSeconds, hnswSeconds: Number.NaN, reused: false };
  log(`${table}: building the HNSW index (m 16, ef_construction 64, one parallel worker)`);
  const started = performance.now();
  await db.transaction(async (tx) => {
    // the graph of a million rows needs about 3.5 GB; a build that spills is many times slower
    await tx.exec(`SET LOCAL maintenance_work_mem = '${n > 200_000 ? '4GB' : '1GB'}'; SET LOCAL max_parallel_maintenance_workers = 1;
      DROP INDEX IF EXISTS ${table}_hnsw; CREATE INDEX ${table}_hnsw ON ${table} USING hnsw (embedding vector_cosine_ops)`);
  });
  const hnswSeconds = (performance.now() - started) / 1000;
  await db.query(`UPDATE peer_builds SET hnsw_seconds = $2, built_at = now() WHERE name = $1`, [table, hnswSeconds]);
  log(`${table}: HNSW built in ${hnswSeconds.toFixed(0)} s`);
  return { table, fillSeconds, hnswSeconds, reused: false };
}

/** The mixture's centres: Gaussian components scaled to length 1, the same on every run (setseed). */
async function ensureCentres(db: Database) {
  const [have] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'peer_centres'`);
  if (have!.n > 0) return;
  await db.transaction(async (tx) => {
    await tx.query(`SELECT setseed(0.5)`);
    await tx.exec(`CREATE TABLE peer_centres (c int PRIMARY KEY, v vector(${DIM}) NOT NULL);
      INSERT INTO peer_centres SELECT g, l2_normalize((SELECT array_agg(sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))
        FROM generate_series(1, ${DIM}) WHERE g IS NOT NULL)::vector) FROM generate_series(0, ${CENTRES - 1}) g`);
  });
}

/** The centres as numbers, for queries drawn from the same mixture. */
export async function centres(db: Database): Promise<number[][]> {
  const rows = await db.query<{ v: string }>(`SELECT v::text AS v FROM peer_centres ORDER BY c`);
  return rows.map((r) => JSON.parse(r.v) as number[]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const db = await openBenchDatabase();
  try {
    for (const spec of process.argv.slice(2)) {
      const [dist, n] = spec.split(':') as [Distribution, string];
      const made = await ensureDataset(db, dist, Number(n));
      console.log(
        `${made.table}: fill ${made.fillSeconds.toFixed(0)} s, HNSW ${made.hnswSeconds.toFixed(0)} s${made.reused ? ' (reused)' : ''}`,
      );
    }
  } finally {
    await db.close();
  }
}
