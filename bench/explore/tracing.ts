// What tracing costs a question (issue 37: at most 0.1 ms more at p50 with it on): explore's whole pipeline with an
// instant model and engine (instant-pipeline.ts), in one process, in blocks of 100 questions with tracing off and on
// in turns, so a busy machine slows both alike. On is what SVC_TRACING_ENABLED=true starts (src/platform/tracing.ts):
// the OpenTelemetry SDK's Node provider (AsyncLocalStorage context), its batch processor and the OTLP/HTTP exporter,
// sending to a receiver in another process that answers as the tracker does and counts the spans; the export's
// own work (serialising and posting) is in the measured time. Off is the API's no-op (no provider, no context
// manager). The services' tracers are taken once at load and OpenTelemetry's API keeps the first provider they
// meet, so the provider registered here hands each span to the SDK's tracer or to none, as the block asks.
// Run: npx tsx bench/explore/tracing.ts [--iterations 2000]
import { spawn } from 'node:child_process';
import { context, INVALID_SPAN_CONTEXT, trace, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { instantPipeline } from './instant-pipeline.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('iterations', '2000'));
const BLOCK = 100;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(3)} ms`;

// The receiver runs in a process of its own, as the tracker does: reading the exports is not the question's cost.
const RECEIVER = `
  let spans = 0;
  require('node:http').createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      if (req.method === 'GET') return res.end(String(spans));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const r of body.resourceSpans ?? []) for (const s of r.scopeSpans ?? []) spans += (s.spans ?? []).length;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;
const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const receiverUrl = await new Promise<string>((resolve) =>
  receiver.stdout.once('data', (d) => resolve(`http://127.0.0.1:${String(d).trim()}`)),
);

const sdk = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'explore' }),
  spanProcessors: [
    new BatchSpanProcessor(
      new OTLPTraceExporter({
        url: `${receiverUrl}/v1/traces`,
        headers: { 'x-mlflow-experiment-id': '0' },
      }),
    ),
  ],
});
const contexts = new AsyncLocalStorageContextManager();
let on = false;
const idle = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
const switching = (name: string): Tracer => ({
  startSpan: (...args) => (on ? sdk.getTracer(name).startSpan(...args) : idle),
  startActiveSpan: ((spanName: string, ...rest: unknown[]) => {
    if (on) return (sdk.getTracer(name).startActiveSpan as (...a: unknown[]) => unknown)(spanName, ...rest);
    return (rest.at(-1) as (s: typeof idle) => unknown)(idle);
  }) as Tracer['startActiveSpan'],
});
const provider: TracerProvider = { getTracer: (name) => switching(name) };
trace.setGlobalTracerProvider(provider);
function tracing(enabled: boolean) {
  on = enabled;
  if (enabled) context.setGlobalContextManager(contexts.enable());
  else context.disable();
}

const { ask, close } = await instantPipeline();
const times = { off: [] as number[], on: [] as number[] };
let asked = 0;
for (const warm of [false, true, false, true]) {
  tracing(warm);
  for (let i = 0; i < 100; i++) await ask(`warm ${asked++} customers per nation`, true);
}
for (let block = 0; block < (2 * N) / BLOCK; block++) {
  const mode = block % 2 === 0 ? 'off' : 'on';
  tracing(mode === 'on');
  for (let i = 0; i < BLOCK; i++) {
    const t = performance.now();
    await ask(`customers per nation ${asked++}`, true);
    times[mode].push(performance.now() - t);
  }
}
tracing(true);
await sdk.forceFlush();
await close();
const spans = Number(await (await fetch(receiverUrl)).text());
receiver.kill();

console.log(
  `explore question, whole pipeline (instant model and engine): ${N} questions with tracing off and ${N} on, in blocks of ${BLOCK}`,
);
console.log(`tracing off | p50 ${ms(pct(times.off, 50))} | p99 ${ms(pct(times.off, 99))}`);
console.log(
  `tracing on  | p50 ${ms(pct(times.on, 50))} | p99 ${ms(pct(times.on, 99))} | ${spans} spans exported (${(spans / (N + 200)).toFixed(1)} a question)`,
);
console.log(`on costs ${ms(pct(times.on, 50) - pct(times.off, 50))} more at p50 (target <= 0.100 ms)`);
