// @ts-check
// The tracker's web UI: native ES modules, no dependencies, no build step. Every view is a hash route (so pages are
// linkable) that reads the MLflow REST API under ajax-api/2.0/mlflow/ (api.js); pages are built with h() and svg()
// from dom.js, so data only ever goes in as text nodes or attribute values, never through innerHTML.
import { ctrlEnterSubmits } from './keys.js';
import { startRouter } from './router.js';
import { compareView } from './views/compare.js';
import { experimentsView } from './views/experiments.js';
import { modelVersionView } from './views/model-version.js';
import { modelsView, modelView } from './views/models.js';
import { runView } from './views/run.js';
import { experimentView } from './views/runs.js';
import { traceOfRequestView } from './views/trace-request.js';
import { traceView } from './views/trace.js';

ctrlEnterSubmits();
startRouter([
  [/^\/?$/, (_m, q) => experimentsView(q)],
  [/^\/experiments$/, (_m, q) => experimentsView(q)],
  [/^\/experiments\/([^/]+)$/, (m, q) => experimentView(decodeURIComponent(m[1] ?? '').split(','), q)],
  [/^\/runs\/([^/]+)$/, (m) => runView(decodeURIComponent(m[1] ?? ''))],
  [/^\/compare$/, (_m, q) => compareView((q.get('runs') ?? '').split(',').filter(Boolean), q)],
  [/^\/models$/, () => modelsView()],
  [/^\/models\/([^/]+)\/versions\/([^/]+)$/, (m) => modelVersionView(decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? ''))],
  [/^\/models\/(.+)$/, (m) => modelView(decodeURIComponent(m[1] ?? ''))],
  [/^\/traces$/, (_m, q) => traceOfRequestView(q)],
  [/^\/traces\/([^/]+)$/, (m) => traceView(decodeURIComponent(m[1] ?? ''))],
]);
