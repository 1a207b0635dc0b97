// @ts-check
// The explore console: a question, its SQL in an editor that runs edits, reasoning, rows and dashboard, feedback and
// sharing, the chart, my dashboards, the CSV of a result, history and saved questions. It calls the same HTTP API as
// every other client; pages are built with h() from dom.js, so values only ever go in as text.
import { byId, h } from './dom.js';
import { downloadCsv } from './download.js';
import { createSqlEditor } from './editor.js';
import { icon } from './icons.js';
import { ctrlEnterSubmits } from './keys.js';
import { createLibrary } from './library.js';
import { callJson, ProblemError } from './problem.js';
import { clearChart, initChart, showChart } from './chart.js';
import { initDashboards } from './dashboards.js';
import { signIn } from './sign-in.js';
import { traceLink } from './trace-link.js';

/** @typedef {import('./types.ts').Catalog} Catalog */
/** @typedef {import('./types.ts').DashboardView} DashboardView */
/** @typedef {import('./types.ts').Me} Me */
/** @typedef {import('./types.ts').ModelList} ModelList */
/** @typedef {import('./types.ts').QueryProblem} QueryProblem */
/** @typedef {import('./types.ts').QueryResponse} QueryResponse */

const input = (/** @type {string} */ id) => byId(id, HTMLInputElement);
const modelPicker = byId('model', HTMLSelectElement);
/** @type {string | null} */
let dashboardId = null;
/** The answer on screen, and the question it answered (null for a statement run from the editor). */
/** @type {{ answer: QueryResponse, question: string | null } | null} */
let shown = null;

// Who calls: the sign-in box under `svc dev`, the ingress elsewhere; nothing is asked before someone is signed in.
ctrlEnterSubmits();
const { headers } = signIn(() => void loadModels());

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
const api = (method, path, body) => callJson(method, path, body, headers());

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err));
/** @param {unknown} err */
const showError = (err) => {
  byId('error').textContent = message(err);
};
initChart(api, showError);
const dashboards = initDashboards(api, showError);

const editor = createSqlEditor(byId('sql-editor'), { onRun: (sql) => void run({ sql }) });
const library = createLibrary({
  api,
  onError: showError,
  onLoad: (item) => {
    editor.value = item.sql;
    if (item.question) byId('question', HTMLTextAreaElement).value = item.question;
    editor.focus();
  },
});

/** Opens the console to the roles it is for, and fills the model picker (the last choice is remembered). */
async function loadModels() {
  try {
    const me = /** @type {Me} */ (await api('GET', '/me'));
    byId('no-console').hidden = me.console;
    for (const form of ['ask', 'workbench', 'save'])
      for (const el of byId(form, HTMLFormElement).elements) if ('disabled' in el) el.disabled = !me.console;
    editor.setEnabled(me.console);
    byId('csv', HTMLButtonElement).disabled = !shown;
    if (!me.console) return;
    void dashboards.refresh();
    void library.refresh();
    byId('model-picker').hidden = false;
    const catalog = /** @type {Catalog} */ (await api('GET', '/catalog'));
    editor.setTables(catalog.entries);
    const list = /** @type {ModelList} */ (await api('GET', '/models'));
    const remembered = localStorage.getItem('svc.model');
    modelPicker.replaceChildren(...list.models.map((m) => new Option(m, m)));
    modelPicker.value = remembered !== null && list.models.includes(remembered) ? remembered : list.default;
  } catch (err) {
    byId('error').textContent = message(err);
  }
}
modelPicker.addEventListener('change', () => localStorage.setItem('svc.model', modelPicker.value));

/** @param {QueryResponse['reasoning']} r */
function showReasoning(r) {
  const rows = [
    ['Intent', r.intent || '—'],
    ['Candidate tables', r.candidate_tables.join(', ')],
    ['Allowed by policy', r.allowed_tables.join(', ')],
    ['Tables used', r.tables_used.join(', ')],
  ];
  byId('reasoning').replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/** @param {QueryResponse} answer */
function showRows(answer) {
  byId('results').replaceChildren(
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          answer.columns.map((c) => h('th', {}, c.name)),
        ),
      ),
      h(
        'tbody',
        {},
        answer.preview_rows.map((row) =>
          h(
            'tr',
            {},
            row.map((v) => h('td', {}, v === null || v === undefined ? '' : String(v))),
          ),
        ),
      ),
    ),
  );
  byId('count').textContent = `${answer.row_count} rows${answer.cached ? ' (cached)' : ''}`;
  byId('redacted').hidden = answer.masked_columns.length === 0;
  byId('redacted').textContent = `redacted: ${answer.masked_columns.join(', ')}`;
}

/** @param {number} bytes */
const estimated = (bytes) => `estimated ${bytes} bytes`;

/** Nothing of an earlier answer stays on screen once a later one failed. */
function clearAnswer() {
  shown = null;
  dashboardId = null;
  for (const id of ['results', 'reasoning', 'count', 'cost', 'shared', 'thanks', 'answer-trace']) byId(id).replaceChildren();
  byId('redacted').hidden = true;
  byId('after').hidden = true;
  byId('share').hidden = true;
  byId('dashboard', HTMLAnchorElement).removeAttribute('href');
  byId('csv', HTMLButtonElement).disabled = true;
  clearChart();
}

/** @param {QueryResponse} answer @param {string | null} question */
function showAnswer(answer, question) {
  shown = { answer, question };
  editor.value = answer.sql;
  byId('cost').textContent = answer.cost_bytes === null ? '' : estimated(answer.cost_bytes);
  showReasoning(answer.reasoning);
  showRows(answer);
  dashboardId = answer.dashboard_id;
  byId('after').hidden = !answer.dashboard_url;
  byId('share').hidden = !answer.dashboard_url || answer.cached;
  byId('shared').textContent = '';
  if (answer.dashboard_url) byId('dashboard', HTMLAnchorElement).href = answer.dashboard_url;
  byId('share').dataset.dashboard = answer.dashboard_id ?? '';
  byId('share-target').textContent = 'this result';
  byId('csv', HTMLButtonElement).disabled = false;
  showChart(answer);
  if (answer.dashboard_id) void dashboards.refresh();
}

/**
 * POST /query with a question from the ask box, or a statement from the editor (Run SQL, Ctrl+Enter).
 * @param {{ question: string } | { sql: string }} what
 */
async function run(what) {
  byId('error').textContent = '';
  byId('thanks').textContent = '';
  /** @type {string | null} */
  let requestId = null;
  try {
    const answer = /** @type {QueryResponse} */ (
      await callJson(
        'POST',
        '/query',
        {
          ...what,
          execute: !input('dry').checked,
          confirm_cost: input('confirm').checked,
          ...('question' in what ? { model: modelPicker.value || undefined } : {}),
        },
        headers(),
        (res) => (requestId = res.headers.get('X-Request-Id')),
      )
    );
    showAnswer(answer, 'question' in what ? what.question : null);
    // with tracing on, the question's trace in the tracker's UI, found by the request id it was answered with
    byId('answer-trace').replaceChildren(traceLink(requestId) ?? '');
  } catch (err) {
    clearAnswer();
    showError(err);
    const problem = /** @type {QueryProblem} */ (err instanceof ProblemError ? err.body : {});
    // a refused question shows the SQL it was refused for, or none; an edited statement stays as the user wrote it
    if ('question' in what) editor.value = problem.sql ?? '';
    if (problem.cost_bytes !== undefined && problem.cost_bytes !== null) byId('cost').textContent = estimated(problem.cost_bytes);
  }
  void library.refreshHistory();
}

byId('ask', HTMLFormElement).addEventListener('submit', (e) => {
  e.preventDefault();
  void run({ question: byId('question', HTMLTextAreaElement).value });
});

byId('workbench', HTMLFormElement).addEventListener('submit', (e) => {
  e.preventDefault();
  void run({ sql: editor.value });
});

byId('csv').addEventListener('click', async () => {
  if (!shown) return;
  try {
    await downloadCsv(headers(), { sql: shown.answer.sql });
  } catch (err) {
    showError(err);
  }
});

byId('save', HTMLFormElement).addEventListener('submit', async (e) => {
  e.preventDefault();
  const title = input('save-title');
  const sql = editor.value;
  // the question travels with its SQL only while the SQL is still the answer's
  const question = shown?.question && shown.answer.sql === sql ? shown.question : undefined;
  try {
    await library.save({ title: title.value, sql, ...(question ? { question } : {}) });
    title.value = '';
  } catch (err) {
    showError(err);
  }
});

for (const rating of /** @type {const} */ (['up', 'down'])) {
  byId(rating).replaceChildren(icon(rating === 'up' ? 'thumbs-up' : 'thumbs-down'));
  byId(rating).addEventListener('click', async () => {
    try {
      await api('POST', '/feedback', { dashboard_id: dashboardId, rating });
      byId('thanks').textContent = 'Thanks for the feedback.';
    } catch (err) {
      byId('error').textContent = message(err);
    }
  });
}

/** @param {string} id an input of comma-separated names */
const names = (id) =>
  input(id)
    .value.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

byId('share', HTMLFormElement).addEventListener('submit', async (e) => {
  e.preventDefault();
  try {
    const d = /** @type {DashboardView} */ (
      await api('PATCH', `/dashboards/${byId('share').dataset.dashboard || dashboardId}/share`, {
        visibility: byId('visibility', HTMLSelectElement).value,
        allowed_users: names('share-users'),
        allowed_groups: names('share-groups'),
      })
    );
    byId('shared').textContent = `Shared: ${d.visibility}`;
    void dashboards.refresh();
  } catch (err) {
    byId('error').textContent = message(err);
  }
});
