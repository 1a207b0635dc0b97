// svc's tracker alone, for working on search_runs: loads RUNS runs as bench/tracker/index.ts does (once, into a
// database that is kept), then times its searches (order by a metric, top 100, a quarter with a filter), CONCURRENCY
// in flight. The database stays for EXPLAIN ANALYZE in psql and for the next run (--db), which restarts the server
// on it with the code as it is then: before and after can alternate in seconds instead of a full bench run.
// Run: npx tsx bench/tracker/search-profile.ts [--db <name>] [--runs 10000] [--searches 400] [--concurrency 8]
//      [--cpu-prof <dir>] [--drop]
// (--cpu-prof writes the server's V8 CPU profile there when it stops; --drop removes the database at the end.)
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPostgres } from '../../src/platform/db/index.ts';
import { freePort } from '../../tests/support/free-port.ts';
import { freshDatabase, realPgConfig } from '../../tests/support/pg.ts';
import { createTestBucket, S3_TEST } from '../../tests/support/s3.ts';
import { call, callText, countRuns, phase, searchBody, seedRuns } from './workload.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const RUNS = Number(arg('runs', '10000'));
const SEARCHES = Number(arg('searches', '400'));
const CONCURRENCY = Number(arg('concurrency', '8'));
const CPU_PROF = arg('cpu-prof', '');
const root = fileURLToPath(new URL('../..', import.meta.url));

async function main() {
  const given = arg('db', '');
  const fresh = given ? undefined : await freshDatabase('search-profile');
  const cfg = fresh?.cfg ?? realPgConfig(given);
  const [bucket, port, dataDir] = await Promise.all([
    createTestBucket('search-profile'),
    freePort(),
    mkdtemp(join(tmpdir(), 'svc-search-profile-')),
  ]);
  const child = spawn(join(root, 'bin/svc'), ['serve', 'tracker', '--port', String(port)], {
    env: {
      ...process.env,
      ...(CPU_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${CPU_PROF}` } : {}),
      SVC_DATA_DIR: dataDir,
      SVC_LOG_LEVEL: 'info',
      SVC_PG_HOST: cfg.host,
      SVC_PG_PORT: String(cfg.port),
      SVC_PG_DATABASE: cfg.database,
      SVC_PG_USER: cfg.user,
      SVC_PG_PASSWORD: cfg.password,
      TRACKER_S3_ENDPOINT_URL: S3_TEST.endpoint,
      OBJSTORE_ACCESS_KEY_ID: S3_TEST.accessKeyId,
      OBJSTORE_SECRET_ACCESS_KEY: S3_TEST.secretAccessKey,
      AWS_DEFAULT_REGION: S3_TEST.region,
      TRACKER_ARTIFACT_ROOT: `s3://${bucket.bucket}/mlflow`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let tries = 0; ; tries++) {
      const ok = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (tries > 240 || child.exitCode !== null) throw new Error('svc serve tracker did not start');
      await new Promise((r) => setTimeout(r, 250));
    }
    let experimentId: string;
    if (fresh) {
      const t0 = performance.now();
      experimentId = await seedRuns(base, 'profile', RUNS, CONCURRENCY);
      const db = openPostgres({ ...cfg, max: 1 });
      await db.exec('ANALYZE');
      await db.close();
      console.log(`loaded ${RUNS} runs into ${cfg.database} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } else {
      const found = await call(base, 'GET', 'experiments/get-by-name', { experiment_name: 'profile' });
      experimentId = found.experiment.experiment_id;
    }
    await phase('warm', 50, CONCURRENCY, (i) => call(base, 'POST', 'runs/search', searchBody(experimentId, i)));
    const before = { server: cpuOf([child.pid!]), pg: cpuOf(backendsOf(cfg.database)), driver: process.cpuUsage() };
    const p = await phase('search', SEARCHES, CONCURRENCY, (i) =>
      callText(base, 'POST', 'runs/search', searchBody(experimentId, i)).then((text) => {
        if (countRuns(text) === 0) throw new Error(`search ${i} returned no run`);
      }),
    );
    const driver = process.cpuUsage(before.driver);
    const per = (ms: number) => (ms / SEARCHES).toFixed(2);
    const cpu = {
      server: per(cpuOf([child.pid!]) - before.server),
      pg: per(cpuOf(backendsOf(cfg.database)) - before.pg),
      driver: per((driver.user + driver.system) / 1000),
    };
    const sorted = [...p.latencies].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2);
    console.log(
      `${cfg.database}${fresh ? ` (${RUNS} runs)` : ''}: ${SEARCHES} searches, ${CONCURRENCY} in flight: ` +
        `${(SEARCHES / p.seconds).toFixed(1)} req/s, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms; load average ${loadAverage()}`,
    );
    // The filtered quarter (searchBody) plans a join per test: its p50 apart from the others'.
    const p50Of = (filtered: boolean) => {
      const xs = p.latencies.filter((_, i) => (i % 4 === 3) === filtered).sort((a, b) => a - b);
      return xs[Math.floor(xs.length / 2)]!.toFixed(2);
    };
    console.log(`p50 unfiltered ${p50Of(false)} ms, filtered ${p50Of(true)} ms`);
    console.log(`CPU ms a search: server ${cpu.server}, its Postgres backends ${cpu.pg}, this driver ${cpu.driver}`);
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    await Promise.allSettled([bucket.drop(), rm(dataDir, { recursive: true, force: true })]);
    if (process.argv.includes('--drop')) {
      const admin = openPostgres({ ...realPgConfig('postgres'), max: 1 });
      await admin.exec(`DROP DATABASE IF EXISTS ${cfg.database} WITH (FORCE)`);
      await admin.close();
    } else if (fresh) {
      console.log(`kept database ${cfg.database}: --db ${cfg.database} to search it again`);
    }
  }
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

// CPU time (user + system, ms) of processes from /proc: the server's, and the Postgres backends serving one
// database (their title is `postgres: <user> <database> ...`); a backend that ended in between is not counted.
const TICK_MS = 10; // USER_HZ is 100 on Linux
function cpuOf(pids: number[]): number {
  let ms = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ms += (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    } catch {
      // ended
    }
  }
  return ms;
}

function backendsOf(database: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').startsWith(`postgres: svc ${database} `)) pids.push(Number(name));
    } catch {
      // ended
    }
  }
  return pids;
}

await main();
