// @ts-check
// One trace (MLflow 3's traces/get): its facts, its spans as a tree (a span under its parent) with each one's type and
// duration, the selected span's inputs and outputs as pretty-printed JSON text, and the trace's assessments.
// traces/get answers OpenTelemetry's Span in protobuf JSON: ids in base64, attributes as AnyValues.
import { api3 } from '../api.js';
import { h } from '../dom.js';
import { formatMillis } from '../format.js';
import { link, section, table } from '../parts.js';
import { formatSeconds, isoTime } from './traces.js';

/** @typedef {import('../types.ts').Span} Span */
/** @typedef {import('../types.ts').Assessment} Assessment */

/**
 * An OpenTelemetry AnyValue in protobuf JSON (proto field names) as a plain value; JSON text in a string stays text.
 * @param {unknown} any
 * @returns {unknown}
 */
export function anyValue(any) {
  if (!any || typeof any !== 'object') return any;
  const v = /** @type {Record<string, any>} */ (any);
  if ('string_value' in v) return v.string_value;
  if ('bool_value' in v) return v.bool_value;
  if ('int_value' in v) return Number(v.int_value);
  if ('double_value' in v) return v.double_value;
  if ('bytes_value' in v) return v.bytes_value;
  if ('array_value' in v) return (v.array_value?.values ?? []).map(anyValue);
  if ('kvlist_value' in v)
    return Object.fromEntries(
      (v.kvlist_value?.values ?? []).map((/** @type {{key: string, value: unknown}} */ kv) => [kv.key, anyValue(kv.value)]),
    );
  return null;
}

/**
 * A span's attribute by key, decoded; undefined when it has none.
 * @param {Span} span
 * @param {string} key
 */
export const attribute = (span, key) => {
  const a = span.attributes.find((x) => x.key === key);
  return a ? anyValue(a.value) : undefined;
};

/**
 * A value as indented JSON text; a string that holds JSON (as MLflow's client writes inputs) is parsed first.
 * @param {unknown} value
 */
export function prettyJson(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? '';
}

/** @param {Span} span */
const spanDuration = (span) =>
  span.end_time_unix_nano ? formatMillis(Number(BigInt(span.end_time_unix_nano) - BigInt(span.start_time_unix_nano)) / 1e6) : '';

/**
 * The trace with its spans, or, when the store holds none of them (a trace logged with its spans as an artifact, or
 * not exported yet), its info alone and the server's reason.
 * @param {string} traceId
 * @returns {Promise<{ trace: { trace_info: import('../types.ts').TraceInfo, spans?: Span[] }, spanless?: string }>}
 */
async function readTrace(traceId) {
  try {
    return await api3('GET', 'traces/get', { trace_id: traceId });
  } catch (err) {
    if (!traceId.startsWith('tr-')) throw err;
    const info = await api3('GET', `traces/${/** @type {`tr-${string}`} */ (traceId)}`).catch(() => {
      throw err;
    });
    return { trace: info.trace, spanless: err instanceof Error ? err.message : String(err) };
  }
}

/** @param {string} traceId */
export async function traceView(traceId) {
  const { trace, spanless } = await readTrace(traceId);
  const info = trace.trace_info;
  const spans = trace.spans ?? [];
  const experimentId = info.trace_location.mlflow_experiment.experiment_id;
  // the run the trace was made in, as MLflow's client records it (a run's page finds linked traces as well)
  const runId = info.trace_metadata?.['mlflow.sourceRun'];

  // The tree: a span whose parent is not in the answer (a partial trace) is shown as a root.
  const ids = new Set(spans.map((s) => s.span_id));
  /** @type {Map<string, Span[]>} */
  const children = new Map();
  for (const s of spans) {
    const parent = s.parent_span_id && ids.has(s.parent_span_id) ? s.parent_span_id : '';
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }

  const detail = h('div', { id: 'span-detail', 'aria-live': 'polite' });
  /** @type {HTMLButtonElement[]} */
  const buttons = [];
  /** @param {Span} span @param {HTMLButtonElement} button */
  const select = (span, button) => {
    for (const b of buttons) b.setAttribute('aria-pressed', String(b === button));
    detail.replaceChildren(spanDetail(span));
  };
  /**
   * @param {Span[]} level
   * @returns {HTMLUListElement}
   */
  const tree = (level) =>
    h(
      'ul',
      { class: 'span-tree' },
      level.map((s) => {
        const type = attribute(s, 'mlflow.spanType');
        const button = h(
          'button',
          { type: 'button', class: 'span', 'aria-pressed': 'false', dataset: { spanId: s.span_id } },
          h('span', { class: 'span-name' }, s.name),
          ' ',
          type ? h('span', { class: 'badge' }, String(type)) : null,
          ' ',
          h('span', { class: 'muted' }, spanDuration(s)),
        );
        button.addEventListener('click', () => select(s, button));
        buttons.push(button);
        const below = children.get(s.span_id);
        return h('li', {}, button, below?.length ? tree(below) : null);
      }),
    );
  const roots = children.get('') ?? [];
  const treeNode = roots.length ? tree(roots) : h('p', { class: 'muted', id: 'no-spans' }, spanless || 'No spans.');
  // the root's button is the first made (the tree is built depth first from it)
  if (roots[0] && buttons[0]) select(roots[0], buttons[0]);

  return h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      link('#/experiments', 'Experiments'),
      ' / ',
      link(`#/experiments/${encodeURIComponent(experimentId)}`, `Experiment ${experimentId}`),
      ' / ',
      info.trace_id,
    ),
    section(
      `Trace ${info.trace_id}`,
      h(
        'dl',
        { class: 'facts' },
        runId
          ? [
              h('dt', {}, 'Run'),
              h('dd', {}, link(`#/runs/${encodeURIComponent(runId)}`, h('span', { class: 'mono', id: 'trace-run' }, runId))),
            ]
          : null,
        h('dt', {}, 'Request time'),
        h('dd', {}, isoTime(info.request_time)),
        h('dt', {}, 'State'),
        h('dd', { id: 'trace-state' }, info.state),
        h('dt', {}, 'Duration'),
        h('dd', {}, formatSeconds(info.execution_duration)),
        h('dt', {}, 'Request'),
        h('dd', { class: 'mono' }, info.request_preview ?? ''),
        h('dt', {}, 'Response'),
        h('dd', { class: 'mono' }, info.response_preview ?? ''),
      ),
    ),
    h('div', { class: 'grid2' }, section('Spans', treeNode), section('Span', detail)),
    assessmentsSection(info.assessments ?? []),
  );
}

/** @param {Span} span */
function spanDetail(span) {
  const inputs = attribute(span, 'mlflow.spanInputs');
  const outputs = attribute(span, 'mlflow.spanOutputs');
  return h(
    'div',
    {},
    h('h3', { id: 'span-name' }, span.name),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Type'),
      h('dd', {}, String(attribute(span, 'mlflow.spanType') ?? '')),
      h('dt', {}, 'Duration'),
      h('dd', {}, spanDuration(span)),
      h('dt', {}, 'Status'),
      h('dd', {}, span.status.code ?? 'STATUS_CODE_UNSET', span.status.message ? `: ${span.status.message}` : ''),
    ),
    h('h3', {}, 'Inputs'),
    inputs === undefined ? h('p', { class: 'muted' }, 'None.') : h('pre', { class: 'preview', id: 'span-inputs' }, prettyJson(inputs)),
    h('h3', {}, 'Outputs'),
    outputs === undefined ? h('p', { class: 'muted' }, 'None.') : h('pre', { class: 'preview', id: 'span-outputs' }, prettyJson(outputs)),
  );
}

/** @param {Assessment[]} assessments */
function assessmentsSection(assessments) {
  if (!assessments.length) return null;
  return section(
    'Assessments',
    table(
      ['Name', 'Kind', 'Value', 'Source', 'Rationale'],
      assessments.map((a) => {
        const fields = /** @type {Record<string, any>} */ (a);
        const kind = 'feedback' in fields ? 'feedback' : 'expectation';
        const source = fields.source ?? {};
        return h(
          'tr',
          { dataset: { assessment: a.assessment_id } },
          h('th', { scope: 'row' }, a.assessment_name),
          h('td', {}, kind),
          h('td', { class: 'mono' }, prettyJson(fields[kind]?.value ?? null)),
          h('td', {}, [source.source_type, source.source_id].filter(Boolean).join(' ')),
          h('td', {}, a.rationale ?? ''),
        );
      }),
      { id: 'assessments', class: 'wide' },
    ),
  );
}
