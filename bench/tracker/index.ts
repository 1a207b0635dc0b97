// svc's tracker against the real MLflow server and, when it installs, mlflow-go-backend (MLflow's server with the hot
// endpoints in Go), in one run, on the same Postgres (each its own database) and MinIO:
//   create runs, log batches, and search runs ordered by a metric over RUNS runs (default 10 000); then export TRACES
//   traces of 10 spans each over OTLP/HTTP (default 2000), as an OpenTelemetry SDK or MLflow 3's client sends them.
// Driver: this script's HTTP loop issues the requests the official Python client sends for create_run, log_batch
// and search_runs (same paths, JSON bodies and headers, read from mlflow's rest_store), CONCURRENCY at a time, so
// the driver's own cost stays small next to the servers' on a two-core machine. Then the official client itself
// (bench/tracker/client_search.py) times search_runs on each and checks that all return the same top runs.
// Memory: resident set of each server's whole session (MLflow forks workers, default 4; mlflow-go starts a Python
// `mlflow server` with as many, in a process group of its own), sampled during the workload; RSS adds pages the
// forked workers share, PSS counts them once, both are printed. Before the searches each server's database is
// analyzed (see analyze()).
// Run: npx tsx bench/tracker/index.ts [--runs 10000] [--concurrency 8] [--searches 100] [--traces 2000] [--no-go]
// (Postgres and MinIO from scripts/; a fresh mlflow server (scripts/start-mlflow.sh), a fresh mlflow-go server
// (scripts/start-mlflow-go.sh; its own venv and MLflow version, scripts/install-mlflow-go.sh), each on its own port
// and database, and a fresh `bin/svc serve tracker` (tests/tracker-client/server.ts) are started and stopped by
// this run. When mlflow-go does not install or start, the run says why and compares svc with MLflow alone.)
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openPostgres } from '../../src/platform/db/index.ts';
import { freshDatabase, realPgConfig } from '../../tests/support/pg.ts';
import { mlflowPython, startTracker } from '../../tests/tracker-client/server.ts';
import { call, callText, countRuns, createRunBody, HEADERS, logBatchBody, phase, type Phase, request, searchBody } from './workload.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const RUNS = Number(arg('runs', '10000'));
const CONCURRENCY = Number(arg('concurrency', '8'));
const SEARCHES = Number(arg('searches', '100'));
const TRACES = Number(arg('traces', '2000'));
const SPANS_PER_TRACE = 10;
const WITH_GO = !process.argv.includes('--no-go');
const root = fileURLToPath(new URL('../..', import.meta.url));

// ---- memory of a session (a server and every process it started), from /proc ----
type Mem = { rss: number; pss: number };
function sessionMemory(sid: number): Mem {
  let rss = 0;
  let pss = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command (which may hold spaces) start at the closing parenthesis: state ppid pgrp session ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[3]) !== sid) continue;
      rss += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1] ?? 0);
      pss += Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${name}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the process ended while being read
    }
  }
  return { rss: rss / 1024, pss: pss / 1024 };
}

function sampler(sid: number) {
  const peak: Mem = { rss: 0, pss: 0 };
  const take = () => {
    const m = sessionMemory(sid);
    peak.rss = Math.max(peak.rss, m.rss);
    peak.pss = Math.max(peak.pss, m.pss);
  };
  take();
  const timer = setInterval(take, 250);
  return { stop: () => (clearInterval(timer), take(), peak) };
}

// ---- the workload (requests in workload.ts) ----
async function workload(
  base: string,
  label: string,
  database: string,
): Promise<{ phases: Phase[]; experimentId: string; experimentName: string }> {
  const experimentName = `bench-${label}-${Date.now().toString(36)}`;
  const { experiment_id: experimentId } = await call(base, 'POST', 'experiments/create', { name: experimentName });
  const runIds: string[] = new Array(RUNS);
  const now = Date.now();
  const phases: Phase[] = [];
  phases.push(
    await phase('create run', RUNS, CONCURRENCY, async (i) => {
      const { run } = await call(base, 'POST', 'runs/create', createRunBody(experimentId, i, now));
      runIds[i] = run.info.run_id;
    }),
  );
  phases.push(
    await phase('log batch (10 metrics, 5 params, 2 tags)', RUNS, CONCURRENCY, (i) =>
      call(base, 'POST', 'runs/log-batch', logBatchBody(runIds[i]!, i, RUNS, now)),
    ),
  );
  await analyze(database);
  phases.push(
    await phase(`search runs over ${RUNS} (order by metric, top 100)`, SEARCHES, CONCURRENCY, (i) =>
      callText(base, 'POST', 'runs/search', searchBody(experimentId, i)).then((text) => {
        const n = countRuns(text);
        if (i % 4 === 3 ? n === 0 : n !== Math.min(100, RUNS)) throw new Error(`search ${i} returned ${n} runs`);
      }),
    ),
  );
  phases.push(
    await phase(`export spans (OTLP JSON, a trace of ${SPANS_PER_TRACE} nested spans a request)`, TRACES, CONCURRENCY, (i) =>
      exportTrace(base, experimentId, i, now),
    ),
  );
  await checkTrace(base, label, TRACES - 1);
  return { phases, experimentId, experimentName };
}

const hexOf = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length);

/**
 * One OTLP/HTTP export as an OpenTelemetry SDK sends a finished trace: SPANS_PER_TRACE spans, each the child of the
 * one before, with MLflow's span type, inputs and outputs as JSON text, to the experiment in MLflow's header.
 */
async function exportTrace(base: string, experimentId: string, i: number, now: number): Promise<void> {
  const start = BigInt(now + i) * 1_000_000n;
  const spans = Array.from({ length: SPANS_PER_TRACE }, (_, k) => ({
    traceId: hexOf(`trace-${i}`, 32),
    spanId: hexOf(`span-${i}-${k}`, 16),
    ...(k > 0 ? { parentSpanId: hexOf(`span-${i}-${k - 1}`, 16) } : {}),
    name: k === 0 ? 'question' : `step-${k}`,
    kind: 1,
    startTimeUnixNano: String(start + BigInt(k) * 1000n),
    endTimeUnixNano: String(start + BigInt(2 * SPANS_PER_TRACE - k) * 1000n),
    attributes: [
      { key: 'mlflow.spanType', value: { stringValue: JSON.stringify(k === SPANS_PER_TRACE - 1 ? 'CHAT_MODEL' : 'CHAIN') } },
      { key: 'mlflow.spanInputs', value: { stringValue: JSON.stringify({ question: `question ${i}`, step: k }) } },
      { key: 'mlflow.spanOutputs', value: { stringValue: JSON.stringify({ answer: `answer ${i}.${k}` }) } },
    ],
    status: { code: 1 },
  }));
  const res = await request(
    `${base}/v1/traces`,
    'POST',
    JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'bench' }, spans }] }] }),
    { 'Content-Type': 'application/json', 'x-mlflow-experiment-id': experimentId },
  );
  if (res.status < 200 || res.status >= 300) throw new Error(`POST /v1/traces -> ${res.status} ${res.text.slice(0, 300)}`);
}

/** The last trace exported reads back whole (traces/get), so each server kept what it was sent. */
async function checkTrace(base: string, label: string, i: number): Promise<void> {
  const id = `tr-${hexOf(`trace-${i}`, 32)}`;
  const res = await fetch(`${base}/api/3.0/mlflow/traces/get?trace_id=${id}`, { headers: HEADERS });
  const spans = res.ok ? (((await res.json()) as { trace?: { spans?: unknown[] } }).trace?.spans ?? []) : [];
  if (spans.length !== SPANS_PER_TRACE) throw new Error(`${label}: trace ${id} reads back ${spans.length} spans (${res.status})`);
}

/**
 * The statistics autovacuum gathers within a minute or so of such writes, gathered at once: searches are measured
 * on tables the planner knows, on every server alike. (Right after the writes, before autovacuum's ANALYZE, both
 * plan without statistics; svc's first 100 searches then took about 4 times as long.)
 */
async function analyze(database: string): Promise<void> {
  const db = openPostgres({ ...realPgConfig(database), max: 1 });
  try {
    await db.exec('ANALYZE');
  } finally {
    await db.close();
  }
}

// ---- the official client's view ----
async function clientSearch(uri: string, experimentId: string): Promise<{ p50: number; p99: number; top: string[] }> {
  const py = await mlflowPython();
  const { stdout } = await promisify(execFile)(py, [join(root, 'bench/tracker/client_search.py'), experimentId], {
    env: { ...process.env, MLFLOW_TRACKING_URI: uri, MLFLOW_DISABLE_TELEMETRY: 'true' },
    timeout: 600_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

// ---- report ----
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const f = (x: number, d = 1) => x.toFixed(d);

type Server = { name: string; url: string; sid: number; database: string; version: string; stop(): Promise<void> };

/**
 * mlflow server or mlflow-go server by its script in scripts/, on a fresh database and a port of its own; its
 * session id is the pid the script recorded (setsid).
 */
async function startMlflow(name: 'mlflow' | 'mlflow-go', portBase: number): Promise<Server> {
  const db = await freshDatabase(`${name}-bench`);
  const port = String(portBase + Math.floor(Math.random() * 400));
  const scripts = name === 'mlflow' ? ['start-mlflow.sh', 'stop-mlflow.sh'] : ['start-mlflow-go.sh', 'stop-mlflow-go.sh'];
  const stop = async () => {
    execFileSync('bash', [join(root, 'scripts', scripts[1]!), port], { stdio: 'inherit' });
    await db.drop();
  };
  let url: string;
  try {
    url = execFileSync('bash', [join(root, 'scripts', scripts[0]!), port], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, MLFLOW_REF_DATABASE: db.cfg.database, MLFLOW_GO_DATABASE: db.cfg.database },
    })
      .toString()
      .trim()
      .split('=')[1]!;
  } catch (e) {
    await stop();
    throw e;
  }
  const runDir = process.env.SVC_RUN ?? join(process.env.SVC_CACHE ?? join(homedir(), '.cache/svc'), 'run');
  const sid = Number(readFileSync(join(runDir, `${name}-${port}/${name}.pid`), 'utf8'));
  const version = await fetch(`${url}/version`).then((r) => r.text());
  return { name, url, sid, database: db.cfg.database, version: version.trim(), stop };
}

async function main() {
  // Every server starts fresh for this run: svc on a new database and bucket, mlflow server and mlflow-go server
  // each on a new database and a port of its own, all stopped at the end.
  const servers: Server[] = [];
  try {
    servers.push(await startMlflow('mlflow', 15100));
    if (WITH_GO) {
      try {
        servers.push(await startMlflow('mlflow-go', 15500));
      } catch (e) {
        console.log(
          `mlflow-go-backend not run: ${(e as Error).message.split('\n')[0]} (its script's output is above); svc vs MLflow only\n`,
        );
      }
    }
    process.env.TRACKER_CLIENT_LOG_LEVEL ??= 'info'; // one access log line per request, as MLflow's uvicorn writes
    const svc = await startTracker('bench-tracker');
    servers.unshift({ name: 'svc', url: svc.url, sid: svc.pid, database: svc.database, version: '', stop: svc.stop });
    for (const x of servers) {
      console.log(`${x.name} ${x.url} (${x.version ? `MLflow ${x.version}, ` : ''}database ${x.database})`);
    }
    console.log(
      `workload: ${RUNS} runs created, ${RUNS} batches logged, ${SEARCHES} searches, ${TRACES} traces of ${SPANS_PER_TRACE} spans exported; ${CONCURRENCY} requests in flight\n`,
    );

    const results: Result[] = [];
    for (const x of servers) {
      const idle = sessionMemory(x.sid);
      const mem = sampler(x.sid);
      const run = await workload(x.url, x.name, x.database);
      const peak = mem.stop();
      const client = await clientSearch(x.url, run.experimentId);
      results.push({ name: x.name, phases: run.phases, mem: peak, idle, client });
      console.log(
        `${x.name}: done (${run.phases.map((p) => `${p.name.split(' (')[0]} ${f(p.seconds)} s`).join(', ')}; load average ${loadAverage()})`,
      );
    }
    report(results);
  } finally {
    for (const x of servers) await x.stop();
  }
}

type Result = { name: string; phases: Phase[]; mem: Mem; idle: Mem; client: { p50: number; p99: number; top: string[] } };

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** One table: each server's req/s, p50 and p99 per phase, then svc's throughput over each peer's. */
function report(results: Result[]) {
  const [s, ...peers] = results as [Result, ...Result[]];
  const total = (r: Result) => r.phases.reduce((n, p) => n + p.requests, 0) / r.phases.reduce((n, p) => n + p.seconds, 0);
  const all = (r: Result) => r.phases.flatMap((p) => p.latencies);
  const rows: string[][] = [
    ['', ...results.flatMap((r) => [`${r.name} req/s`, 'p50 ms', 'p99 ms']), ...peers.map((p) => `svc / ${p.name}`)],
  ];
  for (let i = 0; i < s.phases.length; i++) {
    const rate = (r: Result) => r.phases[i]!.requests / r.phases[i]!.seconds;
    rows.push([
      s.phases[i]!.name,
      ...results.flatMap((r) => [f(rate(r)), f(pct(r.phases[i]!.latencies, 50), 2), f(pct(r.phases[i]!.latencies, 99), 2)]),
      ...peers.map((p) => `${f(rate(s) / rate(p), 2)}x`),
    ]);
  }
  rows.push([
    'all requests',
    ...results.flatMap((r) => [f(total(r)), f(pct(all(r), 50), 2), f(pct(all(r), 99), 2)]),
    ...peers.map((p) => `${f(total(s) / total(p), 2)}x`),
  ]);
  rows.push([
    'official client search_runs (top 100)',
    ...results.flatMap((r) => ['', f(r.client.p50, 1), f(r.client.p99, 1)]),
    ...peers.map((p) => `${f(p.client.p50 / s.client.p50, 2)}x`),
  ]);
  const width = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(width[c]!) : cell.padStart(width[c]!))).join('  '));

  console.log(`\nmemory (session, MiB)         idle RSS   peak RSS   peak PSS`);
  for (const r of results) {
    console.log(`${r.name.padEnd(28)} ${f(r.idle.rss).padStart(9)} ${f(r.mem.rss).padStart(10)} ${f(r.mem.pss).padStart(10)}`);
  }
  const exports = (r: Result) => r.phases.find((p) => p.name.startsWith('export spans'))!;
  console.log(
    `\nspan ingestion (spans/s): ${results.map((r) => `${r.name} ${f((exports(r).requests * SPANS_PER_TRACE) / exports(r).seconds)}`).join(', ')}`,
  );
  const differ = peers.filter((p) => JSON.stringify(p.client.top) !== JSON.stringify(s.client.top));
  console.log(
    `\nsame top 10 through the official client on ${results.map((r) => r.name).join(', ')}: ` +
      (differ.length === 0 ? 'yes' : `NO: svc ${s.client.top} ${differ.map((p) => `${p.name} ${p.client.top}`).join(' ')}`),
  );
  for (const p of peers) {
    console.log(
      `ratio: svc throughput ${f(total(s) / total(p), 2)}x ${p.name}'s` +
        (p.name === 'mlflow' ? ' (target >= 5)' : '') +
        `; svc memory ${f(s.mem.rss / p.mem.rss, 2)} of ${p.name}'s by peak RSS, ${f(s.mem.pss / p.mem.pss, 2)} by peak PSS` +
        (p.name === 'mlflow' ? ' (target <= 0.33)' : ''),
    );
  }
  if (differ.length > 0) process.exitCode = 1;
}

await main();
