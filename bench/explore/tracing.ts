// What tracing costs a question (issue 37: at most 0.1 ms more at p50 with it on): explore's whole pipeline with an
// instant model and engine (instant-pipeline.ts), in one process, with tracing off and on in turns of 20 questions
// (../tracing-switch.ts says what off and on are), so a busy machine slows both alike. Printed: each mode's p50 and
// p99; on's p50 minus off's over the whole run with an interval from resampling the pairs of turns, and the median
// over the pairs of (on's median - off's median) with its own (../tracing-switch.ts); and the CPU time a question of the thread that answers requests (the export worker's
// and the engine's threads are not in it; for the layer alone the process's is printed as well). Each question runs
// in a request's scope as the HTTP app runs it (inRequest, tracing on or off), where a request's trace is kept.
// Run: npx tsx bench/explore/tracing.ts [--iterations 2000]
import { inRequest } from '../../src/platform/request-scope.ts';
import { inRequestTrace, inSpan, tracer } from '../../src/platform/tracing.ts';
import { type PairOfBlocks, pairedCost, pooledCost, tracingSwitch } from '../tracing-switch.ts';
import { instantPipeline } from './instant-pipeline.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('iterations', '2000'));
const TURN = 20;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(3)} ms`;
const millis = ({ user, system }: NodeJS.CpuUsage) => (user + system) / 1000;
/** CPU milliseconds so far: this thread's (Node 23.9 and later; the process's before) and the whole process's. */
const threadCpu = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
const cpuNow = () => ({ thread: millis(threadCpu?.call(process) ?? process.cpuUsage()), process: millis(process.cpuUsage()) });

const tracing = await tracingSwitch('explore');
const pipeline = await instantPipeline();
const { close } = pipeline;
const ask = (question: string, force: boolean) => inRequest(`bench-${asked}`, () => pipeline.ask(question, force));
const times = { off: [] as number[], on: [] as number[] };
const cpu = { off: 0, on: 0 };
const pairs: number[] = [];
const blocks: PairOfBlocks[] = [];
let asked = 0;
for (const on of [false, true, false, true]) {
  tracing.set(on);
  for (let i = 0; i < 100; i++) await ask(`warm ${asked++} customers per nation`, true);
}
/** One turn of TURN questions in `mode`: its times, also added to the mode's, and its CPU. */
async function turn(mode: 'off' | 'on'): Promise<number[]> {
  tracing.set(mode === 'on');
  const used = cpuNow();
  const these: number[] = [];
  for (let i = 0; i < TURN; i++) {
    const t = performance.now();
    await ask(`customers per nation ${asked++}`, true);
    these.push(performance.now() - t);
  }
  cpu[mode] += cpuNow().thread - used.thread;
  times[mode].push(...these);
  return these;
}
for (let i = 0; i < N / TURN; i++) {
  // which mode goes first alternates, so neither always follows the other's leftovers
  const [first, second] = i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
  const a = await turn(first);
  const b = await turn(second);
  const pair = first === 'on' ? { on: a, off: b } : { on: b, off: a };
  blocks.push(pair);
  pairs.push(pct(pair.on, 50) - pct(pair.off, 50));
}
tracing.set(true);
const spans = await tracing.exported();
const dropped = await tracing.dropped();

// The tracing layer alone, where a whole question's noise cannot hide it: a trace of a root and ten steps that do
// nothing, timed from its start to its result (the request's path); the hand-over and export that follow are
// measured as the CPU time of the whole loop.
const layer = { off: [] as number[], on: [] as number[] };
const layerCpu = { off: 0, on: 0 };
const layerProcessCpu = { off: 0, on: 0 };
const steps = tracer('explore');
const emptyTrace = () =>
  inRequest('bench', () =>
    inRequestTrace(
      steps,
      'explore.query',
      { user: 'bench', requestId: 'bench' },
      { question: 'customers per nation' },
      async () => {
        for (let i = 0; i < 10; i++) await inSpan(steps, `explore.step${i}`, async () => i);
        return 10;
      },
      (n) => ({ steps: n }),
    ),
  );
const LAYER_N = 20 * N;
for (let i = 0; i < (2 * LAYER_N) / 1000; i++) {
  const mode = i % 2 === 0 ? 'off' : 'on';
  tracing.set(mode === 'on');
  const used = cpuNow();
  for (let j = 0; j < 1000; j++) {
    const t = performance.now();
    await emptyTrace();
    layer[mode].push(performance.now() - t);
    // as a server's loop turns between requests, and its batches go out as they fill (the SDK keeps 2048 spans)
    if (j % 20 === 19) await new Promise((r) => setTimeout(r, 0));
  }
  await tracing.exported();
  const now = cpuNow();
  layerCpu[mode] += now.thread - used.thread;
  layerProcessCpu[mode] += now.process - used.process;
}
await tracing.close();
await close();
const cost = pairedCost(pairs);
const pooled = pooledCost(blocks);

console.log(
  `explore question, whole pipeline (instant model and engine): ${N} questions with tracing off and ${N} on, in turns of ${TURN}`,
);
console.log(
  `tracing off | p50 ${ms(pct(times.off, 50))} | p99 ${ms(pct(times.off, 99))} | CPU ${ms(cpu.off / N)} a question (this thread)`,
);
console.log(
  `tracing on  | p50 ${ms(pct(times.on, 50))} | p99 ${ms(pct(times.on, 99))} | CPU ${ms(cpu.on / N)} a question | ${spans} spans exported (${(spans / (N + 200)).toFixed(1)} a question), ${dropped} dropped`,
);
console.log(
  `on costs ${ms(pooled.cost)} more at p50 of the whole run (95% interval ${ms(pooled.low)} to ${ms(pooled.high)}, resampling the ${blocks.length} pairs of turns; target <= 0.100 ms)`,
);
console.log(
  `         ${ms(cost.median)} by the median over the pairs of turns of their p50s' difference (95% interval ${ms(cost.low)} to ${ms(cost.high)}); CPU ${ms((cpu.on - cpu.off) / N)} a question more`,
);
const us = (x: number) => `${(x * 1000).toFixed(2)} µs`;
console.log(`\nthe tracing layer alone: ${LAYER_N} traces of a root and ten empty steps each way`);
console.log(
  `tracing off | p50 ${us(pct(layer.off, 50))} | p99 ${us(pct(layer.off, 99))} | CPU ${us(layerCpu.off / LAYER_N)} a trace (this thread), ${us(layerProcessCpu.off / LAYER_N)} (process)`,
);
console.log(
  `tracing on  | p50 ${us(pct(layer.on, 50))} | p99 ${us(pct(layer.on, 99))} | CPU ${us(layerCpu.on / LAYER_N)} a trace (this thread, handed over), ${us(layerProcessCpu.on / LAYER_N)} (process, exported too)`,
);
console.log(
  `on costs ${us(pct(layer.on, 50) - pct(layer.off, 50))} more at p50 on the request's path; CPU ${us((layerCpu.on - layerCpu.off) / LAYER_N)} (this thread), ${us((layerProcessCpu.on - layerProcessCpu.off) / LAYER_N)} (process)`,
);
