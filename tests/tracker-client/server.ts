// Starts svc's tracker (`bin/svc serve tracker`, the deployment path) on the real Postgres (a fresh database) and
// MinIO (a fresh bucket), and runs the Python client suites of this folder against it with the official mlflow
// client from scripts/install-mlflow.sh. Used by tests/integration/tracker-*.test.ts and by hand:
//   npx tsx tests/tracker-client/server.ts conformance|concurrency [--keep]
// (--keep leaves the server, database and bucket in place and prints how to reach them.)
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../support/free-port.ts';
import { freshDatabase } from '../support/pg.ts';
import { createTestBucket, S3_TEST } from '../support/s3.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));

let python: Promise<string> | undefined;
/** The venv python with the pinned official client (installed on first use, a few minutes, then cached). */
export function mlflowPython(): Promise<string> {
  python ??= promisify(execFile)('bash', [join(root, 'scripts/install-mlflow.sh')], { timeout: 900_000 }).then((r) => r.stdout.trim());
  return python;
}

export type RunningTracker = {
  url: string;
  /** The launcher's pid; the server runs in its process group (for memory measurement). */
  pid: number;
  /** What a client needs: the tracking URI and, for direct S3 access, the endpoint and credentials. */
  clientEnv: Record<string, string>;
  database: string;
  bucket: string;
  log(): string;
  stop(): Promise<void>;
};

/** `svc serve tracker` on a fresh database and bucket; waits for GET /health. */
export async function startTracker(label: string): Promise<RunningTracker> {
  const [db, bucket, port, dataDir] = await Promise.all([
    freshDatabase(label),
    createTestBucket(label),
    freePort(),
    mkdtemp(join(tmpdir(), 'svc-tracker-client-')),
  ]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_DATA_DIR: dataDir,
    SVC_LOG_LEVEL: process.env.TRACKER_CLIENT_LOG_LEVEL ?? 'warn',
    SVC_PG_HOST: db.cfg.host,
    SVC_PG_PORT: String(db.cfg.port),
    SVC_PG_DATABASE: db.cfg.database,
    SVC_PG_USER: db.cfg.user,
    SVC_PG_PASSWORD: db.cfg.password,
    TRACKER_S3_ENDPOINT_URL: S3_TEST.endpoint,
    OBJSTORE_ACCESS_KEY_ID: S3_TEST.accessKeyId,
    OBJSTORE_SECRET_ACCESS_KEY: S3_TEST.secretAccessKey,
    AWS_DEFAULT_REGION: S3_TEST.region,
    TRACKER_ARTIFACT_ROOT: `s3://${bucket.bucket}/mlflow`,
  };
  let output = '';
  // detached: its own process group, so stop() ends tsx and the node it runs, and nothing else.
  const child: ChildProcess = spawn(join(root, 'bin/svc'), ['serve', 'tracker', '--port', String(port)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout!.on('data', (d) => (output = (output + d).slice(-200_000)));
  child.stderr!.on('data', (d) => (output = (output + d).slice(-200_000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    }
    await Promise.allSettled([db.drop(), bucket.drop(), rm(dataDir, { recursive: true, force: true })]);
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`svc serve tracker did not become healthy on ${url}; its output:\n${output.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    pid: child.pid!,
    clientEnv: {
      MLFLOW_TRACKING_URI: url,
      MLFLOW_S3_ENDPOINT_URL: S3_TEST.endpoint,
      AWS_ACCESS_KEY_ID: S3_TEST.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3_TEST.secretAccessKey,
      AWS_DEFAULT_REGION: S3_TEST.region,
    },
    database: db.cfg.database,
    bucket: bucket.bucket,
    log: () => output,
    stop,
  };
}

export type SuiteResult = {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  summary?: { passed: number; failed: number; failures: { check: string; reason: string; http: string[] }[] };
};

/**
 * Runs tests/tracker-client/<name>.py with the venv's python against `env`. The client retries a 5xx seven times
 * with growing back-off (minutes); here it retries once, quickly, so a server error fails the check in seconds.
 */
export async function runSuite(
  name: string,
  env: Record<string, string>,
  opts: { timeoutMs?: number; echo?: boolean } = {},
): Promise<SuiteResult> {
  const py = await mlflowPython();
  return new Promise((resolve) => {
    const child = spawn(py, [join(here, `${name}.py`)], {
      cwd: here,
      env: {
        ...process.env,
        MLFLOW_HTTP_REQUEST_MAX_RETRIES: '1',
        MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR: '1',
        MLFLOW_HTTP_REQUEST_TIMEOUT: '60',
        TRACKER_SVC_CHECKS: '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (opts.echo) process.stdout.write(d);
    });
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-100_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 600_000);
    child.on('exit', (exitCode) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('{"suite"'));
      resolve({ exitCode, stdout, stderr, summary: line ? JSON.parse(line) : undefined });
    });
  });
}

/** The failing checks as an assertion message a person can act on. */
export function describeFailures(result: SuiteResult): string {
  if (!result.summary)
    return `no summary (exit ${result.exitCode}); stdout tail:\n${result.stdout.slice(-3000)}\nstderr tail:\n${result.stderr.slice(-3000)}`;
  return result.summary.failures.map((f) => [`FAIL ${f.check}: ${f.reason}`, ...f.http.map((h) => `  http: ${h}`)].join('\n')).join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [name = 'conformance', flag] = process.argv.slice(2);
  const tracker = await startTracker(`client-${name}`);
  console.log(`svc tracker on ${tracker.url} (database ${tracker.database}, bucket ${tracker.bucket})`);
  const result = await runSuite(name, tracker.clientEnv, { echo: true });
  if (result.exitCode !== 0) console.log(`\nserver log tail:\n${tracker.log().slice(-3000)}`);
  if (flag === '--keep') console.log(`kept: MLFLOW_TRACKING_URI=${tracker.url}`);
  else await tracker.stop();
  process.exit(result.exitCode ?? 1);
}
