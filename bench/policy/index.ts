// Decision speed with the decision-log collector down, in one run: the wasm engine with no decision log (the peer:
// the bare evaluation), with a live collector, and with a collector that refuses every batch (503) and one that
// is not listening at all. A decision must never wait for the network: the down rows should match the live one,
// and the dropped column shows the bounded buffer at work. The JSON log lines go to a pino logger at `silent`, so
// the table compares the engine and the buffer, not a terminal.
// Run: npx tsx bench/policy/index.ts [--decisions 20000]
import { createLogger } from '../../src/platform/log.ts';
import { createDecisionLog, createPolicyMetrics, createWasmPolicyEngine, type PolicyEngine } from '../../src/platform/policy/index.ts';
import { collector } from '../../tests/support/policy-bundles.ts';
import { freePort } from '../../tests/support/free-port.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('decisions', '20000'));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const us = (ms: number) => `${(ms * 1000).toFixed(1).padStart(7)} µs`;
const input = (i: number) => ({
  user: `u${i % 50}`,
  roles: ['svc-analyst'],
  table: i % 2 ? 'tpch.tiny.orders' : 'tpch.tiny.supplier',
  token: 'never-logged',
});

async function run(engine: PolicyEngine): Promise<number[]> {
  for (let i = 0; i < 1000; i++) await engine.decide('tables', input(i));
  const times: number[] = [];
  for (let i = 0; i < N; i++) {
    const started = performance.now();
    await engine.decide('tables', input(i));
    times.push(performance.now() - started);
  }
  return times;
}

async function main() {
  const live = await collector();
  const refusing = await collector();
  refusing.setDown(true);
  const nobody = `http://127.0.0.1:${await freePort()}/logs`;
  const logger = createLogger('policy', 'silent');
  const rows: [string, number[], string][] = [];
  const peer = await run(await createWasmPolicyEngine());
  rows.push(['no decision log (peer)', peer, '-']);
  for (const [label, url] of [
    ['collector up', live.url],
    ['collector answers 503', refusing.url],
    ['collector not listening', nobody],
  ] as const) {
    const metrics = createPolicyMetrics();
    const engine = await createWasmPolicyEngine({
      decisionLog: createDecisionLog({ logger, url, metrics, bufferSize: 1_000, flushMs: 100 }),
    });
    const times = await run(engine);
    const dropped = (await metrics.decisionLogsDropped.get()).values[0]?.value ?? 0;
    rows.push([label, times, String(dropped)]);
    await engine.close?.();
  }
  console.log(`policy decisions, ${N} each (wasm engine, tables decision)\n`);
  console.log(`${'case'.padEnd(26)} ${'p50'.padStart(10)} ${'p99'.padStart(10)} ${'vs peer p50'.padStart(12)} ${'dropped'.padStart(8)}`);
  for (const [label, times, dropped] of rows) {
    console.log(
      `${label.padEnd(26)} ${us(pct(times, 50))} ${us(pct(times, 99))} ${`${(pct(times, 50) / pct(peer, 50)).toFixed(2)}x`.padStart(12)} ${dropped.padStart(8)}`,
    );
  }
  console.log(`\ncollector received ${live.events.length} events`);
  await live.close();
  await refusing.close();
}

await main();
