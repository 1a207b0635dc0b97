// svc dev idle, for trying a setting quickly: starts it as index.ts does (without npm start's settings; give them as
// WATCH_NODE_ARGS="--max-semi-space-size=8" and in the environment) and prints its resident set, WebAssembly memories
// and each thread's heap (total/used, external, malloced) every 10 s. Run: npx tsx bench/dev-memory/watch.ts [seconds]
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../tests/support/free-port.ts';
import { breakdown } from './measure.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HERE = fileURLToPath(new URL('./', import.meta.url));
const seconds = Number(process.argv[2] ?? 60);
const extra = (process.env.WATCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const work = await mkdtemp(join(tmpdir(), 'svc-dev-watch-'));
const probeDir = join(work, 'probe');
await mkdir(probeDir);
const env: NodeJS.ProcessEnv = {
  ...process.env,
  SVC_DATA_DIR: join(work, 'data'),
  SVC_LOG_LEVEL: 'warn',
  SVC_LLM_URL: '',
  SVC_EMBED_URL: '',
  SVC_CHAT_URL: '',
  SVC_BENCH_PROBE_DIR: probeDir,
};
const ports: number[] = [];
for (const s of ['SVC_RETRIEVAL_PORT', 'SVC_EXPLORE_PORT', 'SVC_TRACKER_PORT', 'SVC_DASHBOARDS_RUNTIME_PORT']) {
  const p = await freePort();
  ports.push(p);
  env[s] = String(p);
}
const loader = join(ROOT, 'node_modules/tsx/dist/loader.mjs');
const child = spawn(
  process.execPath,
  [...extra, '--import', `file://${loader}`, '--import', `file://${join(HERE, 'probe.mjs')}`, 'src/main.ts', 'dev'],
  { cwd: ROOT, env, stdio: 'inherit' },
);
const began = Date.now();
const ok = (p: number) =>
  fetch(`http://127.0.0.1:${p}/ready`).then(
    (r) => r.ok,
    () => false,
  );
while (!(await Promise.all(ports.map(ok))).every(Boolean)) await new Promise((r) => setTimeout(r, 250));
console.log(`pid ${child.pid} ready in ${((Date.now() - began) / 1000).toFixed(1)} s, load ${loadavg()[0]!.toFixed(1)}`);
for (let t = 0; t <= seconds; t += 10) {
  const b = await breakdown(child.pid!, probeDir);
  const rows = [];
  for (const f of await readdir(probeDir)) rows.push(JSON.parse(await readFile(join(probeDir, f), 'utf8').catch(() => '{}')));
  const heaps = rows
    .filter((r) => r.alive && Date.now() - r.at < 5000)
    .map(
      (r) =>
        `${r.main ? 'main' : r.script.split('/').pop()} ${(r.heapTotal / 1e6).toFixed(0)}/${(r.heapUsed / 1e6).toFixed(0)} ext ${(r.external / 1e6).toFixed(0)} mal ${(r.malloced / 1e6).toFixed(0)}`,
    );
  console.log(
    `t+${t}s rss ${(b.rss / 1e6).toFixed(0)} MB wasm ${b.wasm.map((x) => (x / 1e6).toFixed(0)).join(',')} | ${heaps.join(' | ')} | threads ${b.threads}`,
  );
  await new Promise((r) => setTimeout(r, 10_000));
}
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await rm(work, { recursive: true, force: true });
