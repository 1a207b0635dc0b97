import { trace, SpanStatusCode, type Tracer } from '@opentelemetry/api';

// Spans go through the OpenTelemetry API, which is a no-op until `initTracing` registers a provider
// (SVC_TRACING_ENABLED=true), so the hot path pays nothing when tracing is off.
let started = false;

/** `experimentId`: the tracker experiment the spans go to (MLflow's OTLP header), when the endpoint is a tracker. */
export async function initTracing(serviceName: string, endpoint?: string, opts: { experimentId?: string | undefined } = {}): Promise<void> {
  if (started) return;
  started = true;
  const { NodeTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-node');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const exporter = new OTLPTraceExporter({
    ...(endpoint ? { url: `${endpoint.replace(/\/$/, '')}/v1/traces` } : {}),
    ...(opts.experimentId ? { headers: { 'x-mlflow-experiment-id': opts.experimentId } } : {}),
  });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  provider.register();
}

export const tracer = (service: string): Tracer => trace.getTracer(service);

/** Runs `fn` inside a span named `name`; records the error and rethrows. */
export async function inSpan<T>(t: Tracer, name: string, fn: () => Promise<T>): Promise<T> {
  return t.startActiveSpan(name, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}
