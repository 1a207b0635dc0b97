// @ts-check
// A request's trace, found by the request's id. The platform's own traces keep the X-Request-Id their request was
// answered with as the trace's client_request_id, so a console links an answer to
// `#/traces?request_id=<id>&experiment_id=<id>`: the page searches for it (traces/search with
// `client_request_id = '…'`) in that experiment, or in every active one when none is named, and shows the trace's page
// under the trace's own address. The platform exports spans in batches, a few seconds after the request, so a trace
// not there yet is said, with a button that looks again.
import { allPages, api3 } from '../api.js';
import { h } from '../dom.js';
import { quote } from '../format.js';
import { link, section } from '../parts.js';
import { guarded, hashFor, refresh } from '../router.js';
import { traceView } from './trace.js';

/** @param {URLSearchParams} query */
export async function traceOfRequestView(query) {
  const requestId = query.get('request_id')?.trim() ?? '';
  if (!requestId) return h('p', {}, 'No request id given: open a trace from its experiment. ', link('#/experiments', 'Experiments'));
  const named = query.get('experiment_id');
  const experimentIds = named
    ? [named]
    : (await allPages('experiments/search', { max_results: 1000 }, (page) => page.experiments)).map((e) => e.experiment_id);
  const { traces = [] } = await api3('POST', 'traces/search', {
    locations: experimentIds.map((id) => ({ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: id } })),
    filter: `client_request_id = ${quote(requestId)}`,
    max_results: 1,
  });
  const found = traces[0];
  if (found) {
    // the trace's own address replaces the request's, so the page is linked and reloaded as any trace's
    history.replaceState(null, '', hashFor(`/traces/${encodeURIComponent(found.trace_id)}`));
    return traceView(found.trace_id);
  }
  return section(
    `Trace of request ${requestId}`,
    h(
      'p',
      { id: 'trace-missing' },
      `No trace of request ${requestId} yet. The platform sends its spans a few seconds after a request ends; `,
      'a request made while tracing was off, or one you may not read, has none here.',
    ),
    h('p', {}, h('button', { type: 'button', onclick: guarded(refresh) }, 'Look again')),
  );
}
