// Explore benchmark, in one run:
//   the time the pipeline itself adds per step (p50, p99), with an instant model and engine stand-in so that only
//   svc's own work is measured; the cache-hit latency; and the table-policy decision latency of the in-process wasm
//   against a real OPA sidecar (scripts/start-opa.sh).
// Run: npx tsx bench/explore/index.ts [--iterations 2000]
import { execFileSync } from 'node:child_process';
import { createSidecarPolicyEngine, createWasmPolicyEngine, type PolicyEngine } from '../../src/platform/policy/index.ts';
import { exportSpansTo, flushSpans, SPAN_FIELDS, type Sink } from '../../src/platform/tracing-export.ts';
import { instantPipeline } from './instant-pipeline.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('iterations', '2000'));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const us = (ms: number) => `${(ms * 1000).toFixed(1).padStart(9)} µs`;

// per-step durations from the pipeline's own spans
const durations = new Map<string, number[]>();
const collector: Sink = {
  send({ spans }) {
    // a span's name, its start and its end are its 1st, 6th and 7th values (SpanBatch)
    for (let at = 0; at < spans.length; at += SPAN_FIELDS) {
      const [name, took] = [spans[at] as string, (spans[at + 6] as number) - (spans[at + 5] as number)];
      // appended in place: copying the list at every span made garbage that the measured steps then paid for
      const list = durations.get(name);
      if (list) list.push(took);
      else durations.set(name, [took]);
    }
  },
  flush: async () => {},
  close: async () => {},
};
exportSpansTo(collector);

async function main() {
  const { ask, close } = await instantPipeline();
  for (let i = 0; i < 200; i++) await ask(`warm ${i} customers per nation`, true);
  await flushSpans();
  durations.clear();
  const total: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await ask(`customers per nation ${i}`, true);
    total.push(performance.now() - t);
  }
  await flushSpans();
  const hits: number[] = [];
  await ask('cached customers per nation', false);
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await ask('cached customers per nation', false);
    hits.push(performance.now() - t);
  }

  execFileSync('bash', ['scripts/start-opa.sh'], { stdio: 'inherit' });
  const wasm = await createWasmPolicyEngine();
  const sidecar = createSidecarPolicyEngine({ url: process.env.SVC_IT_OPA_URL ?? 'http://127.0.0.1:18181' });
  const decide = async (engine: PolicyEngine) => {
    const xs: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await engine.decide('tables', { user: 'ana', roles: ['svc-analyst'], table: i % 2 ? 'tpch.tiny.customer' : 'tpch.tiny.supplier' });
      xs.push(performance.now() - t);
    }
    return xs;
  };
  await decide(wasm);
  const wasmTimes = await decide(wasm);
  const opaTimes = await decide(sidecar);

  console.log(`\npipeline overhead per step (model and engine replaced by instant stand-ins), ${N} queries`);
  console.log(' step                  |          p50 |          p99');
  for (const [name, xs] of durations) console.log(` ${name.padEnd(21)} | ${us(pct(xs, 50))} | ${us(pct(xs, 99))}`);
  console.log(` ${'whole pipeline'.padEnd(21)} | ${us(pct(total, 50))} | ${us(pct(total, 99))}   (target p50 < 5 ms)`);
  console.log(` ${'cache hit'.padEnd(21)} | ${us(pct(hits, 50))} | ${us(pct(hits, 99))}   (target < 1 ms)`);
  console.log(`\ntable policy decision, ${N} decisions`);
  console.log(` ${'wasm (in-process)'.padEnd(21)} | ${us(pct(wasmTimes, 50))} | ${us(pct(wasmTimes, 99))}   (target < 50 µs)`);
  console.log(` ${'OPA sidecar (HTTP)'.padEnd(21)} | ${us(pct(opaTimes, 50))} | ${us(pct(opaTimes, 99))}`);
  console.log(` ratio sidecar / wasm p50: ${(pct(opaTimes, 50) / pct(wasmTimes, 50)).toFixed(1)}x`);
  await close();
}

await main();
