// @ts-check
// An experiment's traces, or a run's (MLflow 3's traces/search), newest first as the server orders them: when each request came,
// its state, how long it took and a preview of the request; each links to its trace page (trace.js).
import { api3 } from '../api.js';
import { h } from '../dom.js';
import { formatMillis, formatTime } from '../format.js';
import { link, section, table } from '../parts.js';

/** @typedef {import('../types.ts').TraceInfo} TraceInfo */

/** What the list asks for: one page; a longer history is searched with the client. */
const MAX_TRACES = 100;

/**
 * An RFC 3339 time as the UI writes times elsewhere.
 * @param {string | undefined} iso
 */
export const isoTime = (iso) => (iso ? formatTime(Date.parse(iso)) : '');

/**
 * A protobuf Duration ("0.25s").
 * @param {string | undefined} duration
 */
export function formatSeconds(duration) {
  if (!duration) return '';
  const s = Number.parseFloat(duration);
  return Number.isFinite(s) ? formatMillis(s * 1000) : duration;
}

/**
 * @param {string[]} experimentIds
 * @param {string} [filter] a search_traces filter (a run's: run_id = '…')
 */
export async function tracesSection(experimentIds, filter) {
  const { traces = [] } = await api3('POST', 'traces/search', {
    locations: experimentIds.map((id) => ({ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: id } })),
    filter,
    max_results: MAX_TRACES,
  });
  return section(
    'Traces',
    traces.length
      ? table(
          ['Request time', 'State', 'Duration', 'Request'],
          traces.map((t) =>
            h(
              'tr',
              { dataset: { traceId: t.trace_id } },
              h('th', { scope: 'row' }, link(`#/traces/${encodeURIComponent(t.trace_id)}`, isoTime(t.request_time))),
              h('td', { dataset: { column: 'state' } }, t.state),
              h('td', { class: 'num' }, formatSeconds(t.execution_duration)),
              h('td', { class: 'mono preview-cell' }, t.request_preview ?? ''),
            ),
          ),
          { id: 'traces', class: 'wide' },
        )
      : h('p', { class: 'muted', id: 'traces' }, 'No traces.'),
  );
}
