// Tracing off and on in one process, for the benches that print what tracing costs a request (issue 37). On is what
// SVC_TRACING_ENABLED=true starts (src/platform/tracing.ts): the OpenTelemetry SDK's Node provider (AsyncLocalStorage
// context), its batch processor and the OTLP/HTTP exporter, sending to a receiver in a process of its own that
// answers as the tracker does and counts the spans; the export's own work (serialising and posting) is in the
// measured time, reading it is not. Off is the API's no-op (no provider, no context manager). The services take
// their tracers once at load and OpenTelemetry's API keeps the first provider they meet, so the provider registered
// here hands each span to the SDK's tracer or to none, as `set` says. Switch only between requests.
import { spawn } from 'node:child_process';
import { context, INVALID_SPAN_CONTEXT, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

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

export type TracingSwitch = {
  set(on: boolean): void;
  /** Flushes what is queued and says how many spans the receiver has read. */
  exported(): Promise<number>;
  close(): Promise<void>;
};

export async function tracingSwitch(service: string): Promise<TracingSwitch> {
  const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) => receiver.stdout.once('data', (d) => resolve(`http://127.0.0.1:${String(d).trim()}`)));
  const sdk = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${url}/v1/traces`, headers: { 'x-mlflow-experiment-id': '0' } })),
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
  trace.setGlobalTracerProvider({ getTracer: (name) => switching(name) });
  const set = (enabled: boolean) => {
    on = enabled;
    if (enabled) context.setGlobalContextManager(contexts.enable());
    else context.disable();
  };
  return {
    set,
    async exported() {
      await sdk.forceFlush();
      return Number(await (await fetch(url)).text());
    },
    async close() {
      await sdk.shutdown();
      receiver.kill();
    },
  };
}
