// `npm run test:mlflow-suite`: MLflow's own REST test files (tests/tracking/test_rest_tracking.py and
// test_model_registry.py, from a checkout given as MLFLOW_TESTS_DIR) against `svc serve tracker` and, for the
// baseline, against MLflow's own server, with the same selection (svc_plugin.py). Prints passed/failed per file and
// server, and the tests that pass on MLflow but not on svc. Not part of CI: the files come from MLflow's
// repository, not from a package registry, and are never committed here.
//
//   MLFLOW_TESTS_DIR=$(bash tests/mlflow-suite/checkout.sh <MLflow clone>) npm run test:mlflow-suite
//   ... npm run test:mlflow-suite -- --server svc          # one server (svc | mlflow); the other's last results are reused
//   ... npm run test:mlflow-suite -- --server svc -k alias # extra arguments go to pytest
//   ... npm run test:mlflow-suite -- --files tests/tracing/test_otel_loading.py  # some of the files only
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));
// tests/tracing/test_otel_loading.py is the one file of tests/tracing/ that runs against a server (its _init_server);
// the others run MLflow's tracing SDK in-process, or its server app in-process (test_otel_logging.py).
const ALL_FILES = ['tests/tracking/test_rest_tracking.py', 'tests/tracking/test_model_registry.py', 'tests/tracing/test_otel_loading.py'];
const args = process.argv.slice(2);
const option = (flag: string) => {
  const at = args.indexOf(flag);
  return at >= 0 ? args.splice(at, 2)[1] : undefined;
};
const FILES = option('--files')?.split(',') ?? ALL_FILES;
const out = join(root, '.svc', 'mlflow-suite');

type Outcome = { nodeid: string; outcome: string };

async function main(): Promise<number> {
  const testsDir = process.env.MLFLOW_TESTS_DIR;
  if (!testsDir || !existsSync(join(testsDir, ALL_FILES[0]!))) {
    console.error(
      "MLFLOW_TESTS_DIR must name a checkout of MLflow's repository (it holds tests/tracking/). Write one with\n" +
        '  bash tests/mlflow-suite/checkout.sh <a clone of github.com/mlflow/mlflow> [ref]\n' +
        'and pass the folder it prints.',
    );
    return 2;
  }
  const server = option('--server');
  const servers = server ? [server] : ['mlflow', 'svc'];
  const python = (await promisify(execFile)('bash', [join(here, 'install.sh')], { timeout: 1_800_000 })).stdout.trim();
  await mkdir(out, { recursive: true });
  for (const server of servers) await runPytest(python, testsDir, server, args);
  const results = Object.fromEntries(await Promise.all(['svc', 'mlflow'].map(async (s) => [s, await readResults(s)] as const))) as Record<
    string,
    Outcome[] | undefined
  >;
  report(results);
  return 0;
}

async function runPytest(python: string, testsDir: string, server: string, extra: string[]): Promise<void> {
  const results = join(out, `${server}.jsonl`);
  await rm(results, { force: true });
  const env = {
    ...process.env,
    SVC_SUITE_SERVER: server,
    SVC_SUITE_RESULTS: results,
    // The svc checkout to serve (a snapshot, so edits made while the suite runs do not change the server under test).
    SVC_ROOT: process.env.SVC_SUITE_ROOT ?? root,
    PYTHONPATH: [here, testsDir, process.env.PYTHONPATH].filter(Boolean).join(':'),
    MLFLOW_ENABLE_TELEMETRY: 'false',
    DO_NOT_TRACK: 'true',
    MLFLOW_HTTP_REQUEST_MAX_RETRIES: '1',
  };
  const argv = [
    '-m',
    'pytest',
    ...FILES,
    '-p',
    'svc_plugin',
    '-p',
    'no:cacheprovider',
    '-o',
    'addopts=',
    '-q',
    '-rN',
    '--timeout=300',
    ...extra,
  ];
  console.log(`\n== ${server}: pytest ${FILES.join(' ')} (${testsDir})`);
  const code = await new Promise<number>((resolve) => {
    const child = spawn(python, argv, { cwd: testsDir, env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (c) => resolve(c ?? 1));
  });
  console.log(`== ${server}: pytest exited ${code}`);
}

async function readResults(server: string): Promise<Outcome[] | undefined> {
  const file = join(out, `${server}.jsonl`);
  if (!existsSync(file)) return undefined;
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Outcome);
}

function report(results: Record<string, Outcome[] | undefined>): void {
  const rows: string[] = ['| file | server | passed | failed | skipped | xfailed |', '|---|---|---|---|---|---|'];
  for (const file of FILES) {
    for (const server of ['svc', 'mlflow']) {
      const list = (results[server] ?? []).filter((r) => r.nodeid.startsWith(file));
      if (!results[server]) continue;
      const n = (o: string) => list.filter((r) => r.outcome === o).length;
      rows.push(`| ${file.split('/').pop()} | ${server} | ${n('passed')} | ${n('failed')} | ${n('skipped')} | ${n('xfailed')} |`);
    }
  }
  console.log(`\n${rows.join('\n')}`);
  if (results.svc && results.mlflow) {
    const svc = new Map(results.svc.map((r) => [r.nodeid, r.outcome]));
    const gaps = results.mlflow.filter((r) => r.outcome === 'passed' && svc.get(r.nodeid) !== 'passed');
    console.log(`\nPass on MLflow, not on svc (${gaps.length}):`);
    for (const g of gaps) console.log(`  ${g.nodeid}  [svc: ${svc.get(g.nodeid) ?? 'not run'}]`);
    void writeFile(join(out, 'gaps.txt'), gaps.map((g) => g.nodeid).join('\n') + '\n');
  }
}

process.exitCode = await main();
