import { Hono } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { experimentIdOf } from '../wire/rules.ts';
import { decodeOtlp, decompress, OtlpError, otlpMediaType } from './otlp.ts';
import { logSpans } from './spans-store.ts';

// POST /v1/traces: OTLP/HTTP trace export, where MLflow 3's client (log_spans) and any OpenTelemetry SDK send spans.
// The experiment comes in the x-mlflow-experiment-id header, as MLflow's server requires it. Refusals of the
// request's form answer as MLflow's FastAPI route does ({"detail": ...}); the tracker's own refusals (no such
// experiment) in MLflow's {"error_code", "message"}. A protobuf request is answered with an empty
// ExportTraceServiceResponse in protobuf (zero bytes), a JSON one with `{}` (OTLP answers in the request's encoding).

export const OTLP_TRACES_PATH = '/v1/traces';
const EXPERIMENT_HEADER = 'x-mlflow-experiment-id';

export function otlpRoutes(deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>().post(OTLP_TRACES_PATH, async (c) => {
    const experiment = c.req.header(EXPERIMENT_HEADER);
    if (!experiment) {
      return c.json({ detail: [{ type: 'missing', loc: ['header', EXPERIMENT_HEADER], msg: 'Field required', input: null }] }, 422);
    }
    try {
      const media = otlpMediaType(c.req.header('content-type'));
      const experimentId = experimentIdOf(experiment);
      const body = decompress(new Uint8Array(await c.req.arrayBuffer()), c.req.header('content-encoding'), deps.config.maxJsonBytes);
      const spans = decodeOtlp(body, media);
      await logSpans(deps.db, experimentId, spans);
      return media === 'application/json' ? c.json({}) : c.body(new Uint8Array(0), 200, { 'Content-Type': 'application/x-protobuf' });
    } catch (err) {
      if (err instanceof OtlpError) return c.json({ detail: err.message }, err.status);
      throw err;
    }
  });
}
