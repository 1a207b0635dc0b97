// What tracing costs a question (issue 37: at most 0.1 ms more at p50 with it on): explore's whole pipeline with an
// instant model and engine (instant-pipeline.ts), in one process, in blocks of 100 questions with tracing off and on
// in turns (../tracing-switch.ts says what off and on are), so a busy machine slows both alike.
// Run: npx tsx bench/explore/tracing.ts [--iterations 2000]
import { tracingSwitch } from '../tracing-switch.ts';
import { instantPipeline } from './instant-pipeline.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('iterations', '2000'));
const BLOCK = 100;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(3)} ms`;

const tracing = await tracingSwitch('explore');
const { ask, close } = await instantPipeline();
const times = { off: [] as number[], on: [] as number[] };
let asked = 0;
for (const warm of [false, true, false, true]) {
  tracing.set(warm);
  for (let i = 0; i < 100; i++) await ask(`warm ${asked++} customers per nation`, true);
}
for (let block = 0; block < (2 * N) / BLOCK; block++) {
  const mode = block % 2 === 0 ? 'off' : 'on';
  tracing.set(mode === 'on');
  for (let i = 0; i < BLOCK; i++) {
    const t = performance.now();
    await ask(`customers per nation ${asked++}`, true);
    times[mode].push(performance.now() - t);
  }
}
tracing.set(true);
const spans = await tracing.exported();
await tracing.close();
await close();

console.log(
  `explore question, whole pipeline (instant model and engine): ${N} questions with tracing off and ${N} on, in blocks of ${BLOCK}`,
);
console.log(`tracing off | p50 ${ms(pct(times.off, 50))} | p99 ${ms(pct(times.off, 99))}`);
console.log(
  `tracing on  | p50 ${ms(pct(times.on, 50))} | p99 ${ms(pct(times.on, 99))} | ${spans} spans exported (${(spans / (N + 200)).toFixed(1)} a question)`,
);
console.log(`on costs ${ms(pct(times.on, 50) - pct(times.off, 50))} more at p50 (target <= 0.100 ms)`);
