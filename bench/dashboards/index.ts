// Dashboards runtime benchmark: time from a viewer's request to the first byte of a freshly launched sandbox
// (access decision by explore over HTTP, signature check, process start, proxy), next to a bare `node -e 0` start
// on the same machine.
// Run: npx tsx bench/dashboards/index.ts [--launches 40]
import { spawn } from 'node:child_process';
import { runtimeHarness } from '../../tests/support/dashboards.ts';
import { exploreHarness } from '../../tests/support/explore.ts';

const i = process.argv.indexOf('--launches');
const N = i > 0 ? Number(process.argv[i + 1]) : 40;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

const h = await exploreHarness();
const runtime = await runtimeHarness(h, { limits: { idleSeconds: 600, max: N + 1, maxPerUser: 1 } });
const q = await h.ask({ user: 'olivia', role: 'svc-analyst' }, { question: 'how many customers are there per nation' });
await h.call(
  'PATCH',
  `/dashboards/${q.body.dashboard_id}/share`,
  { user: 'olivia', role: 'svc-analyst' },
  { visibility: 'public', allowed_users: [], allowed_groups: [] },
);

const firstByte: number[] = [];
for (let n = 0; n < N; n++) {
  const t = performance.now();
  const res = await runtime.app.request(`/d/${q.body.dashboard_id}`, {
    headers: { 'X-User-Id': `viewer${n}`, 'X-User-Role': 'svc-analyst' },
  });
  const reader = res.body!.getReader();
  await reader.read();
  firstByte.push(performance.now() - t);
  await reader.cancel();
  if (res.status !== 200) throw new Error(`status ${res.status}`);
}
const bare: number[] = [];
for (let n = 0; n < N; n++) {
  const t = performance.now();
  await new Promise((resolve) => spawn(process.execPath, ['-e', '0']).once('exit', resolve));
  bare.push(performance.now() - t);
}
console.log(`\n${N} fresh sandboxes, one per viewer`);
console.log(' path                                   |     p50 |     p99');
console.log(
  ` request to first byte, fresh sandbox   | ${pct(firstByte, 50).toFixed(1).padStart(5)} ms | ${pct(firstByte, 99).toFixed(1).padStart(5)} ms   (target p50 < 300 ms)`,
);
console.log(
  ` bare \`node -e 0\` start and exit       | ${pct(bare, 50).toFixed(1).padStart(5)} ms | ${pct(bare, 99).toFixed(1).padStart(5)} ms`,
);
console.log(` ratio p50: ${(pct(firstByte, 50) / pct(bare, 50)).toFixed(2)}x`);
await runtime.close();
await h.close();
process.exit(0);
