// @ts-check
// The runs of one or more experiments in one table: a column per parameter and per metric, sorted and filtered by
// the server (both part of the link), and a selection of runs to compare that lasts across pages and experiments;
// below them the experiments' traces (traces.js). One experiment is renamed, described, deleted or restored here
// (experiment-edit.js); the deleted runs are listed on asking (the link's `view`), each with a button that restores it.
import { api, PAGE_SIZE } from '../api.js';
import { h } from '../dom.js';
import { byKey, formatDuration, formatNumber, formatTime, quoteKey, runName } from '../format.js';
import { link, section } from '../parts.js';
import { actionButton } from '../edit.js';
import { guarded, hashFor } from '../router.js';
import { experimentDescription, experimentRenameForm, viewType, viewTypeSelect } from './experiment-edit.js';
import { tracesSection } from './traces.js';

/** @typedef {import('../types.ts').Run} Run */

/** Runs ticked in a runs table; kept across re-renders and experiments so runs of several can be compared. */
/** @type {Set<string>} */
const selection = new Set();

/**
 * @param {string[]} ids experiment ids
 * @param {URLSearchParams} query `order`, `filter` and `view` (active, deleted or all runs)
 */
export async function experimentView(ids, query) {
  const order = query.get('order') ?? '';
  const filter = query.get('filter') ?? '';
  const view = query.get('view') ?? '';
  const path = `/experiments/${ids.map(encodeURIComponent).join(',')}`;
  const experiments = await Promise.all(ids.map((id) => api('GET', 'experiments/get', { experiment_id: id }).then((r) => r.experiment)));
  const names = new Map(experiments.map((e) => [e.experiment_id, e.name]));
  /** @type {Run[]} */
  const runs = [];
  /** @type {string | undefined} */
  let token;
  const holder = h('div');
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const count = h('span', { class: 'muted', id: 'run-count' });
  const compare = h('button', { type: 'button', id: 'compare' });
  const clear = h('button', { type: 'button', class: 'link' }, 'Clear selection');
  const updateCompare = () => {
    compare.textContent = `Compare selected (${selection.size})`;
    compare.disabled = selection.size === 0;
    clear.hidden = selection.size === 0;
  };
  compare.addEventListener('click', () => {
    location.hash = hashFor('/compare', { runs: [...selection].join(',') });
  });
  clear.addEventListener('click', () => {
    selection.clear();
    updateCompare();
    for (const box of holder.querySelectorAll('input[type=checkbox]')) if (box instanceof HTMLInputElement) box.checked = false;
  });

  const load = async () => {
    const page = await api('POST', 'runs/search', {
      experiment_ids: ids,
      filter,
      run_view_type: viewType(view),
      max_results: PAGE_SIZE,
      order_by: order ? [order] : [],
      page_token: token,
    });
    runs.push(...(page.runs ?? []));
    token = page.next_page_token;
    more.hidden = !token;
    count.textContent = `${runs.length} run${runs.length === 1 ? '' : 's'}${token ? ' loaded' : ''}`;
    holder.replaceChildren(runsTable(runs, { path, order, filter, view, several: ids.length > 1, names, onSelect: updateCompare }));
  };
  more.addEventListener('click', guarded(load));
  await load();
  updateCompare();

  const filterInput = h('input', {
    type: 'search',
    id: 'run-filter',
    value: filter,
    placeholder: "metrics.rmse < 1 and params.model = 'tree'",
  });
  const form = h(
    'form',
    {
      class: 'toolbar',
      role: 'search',
      onsubmit: (e) => {
        e.preventDefault();
        location.hash = hashFor(path, { filter: filterInput.value.trim(), order, view });
      },
    },
    h('label', { for: 'run-filter' }, 'Filter runs'),
    filterInput,
    h('button', { type: 'submit' }, 'Search'),
    viewTypeSelect('run-view', view, (v) => {
      location.hash = hashFor(path, { filter, order, view: v === 'active' ? '' : v });
    }),
    compare,
    clear,
    count,
  );
  const [only] = experiments.length === 1 ? experiments : [];
  const title = only ? `Experiment ${only.name}` : `Experiments ${experiments.map((e) => e.name).join(', ')}`;
  return h(
    'div',
    {},
    h('p', { class: 'muted' }, link('#/experiments', 'Experiments'), ' / ', experiments.map((e) => e.name).join(', ')),
    section(title, only ? experimentRenameForm(only) : null, form, holder, more),
    only ? await experimentDescription(only) : null,
    await tracesSection(ids),
  );
}

/**
 * @param {Run[]} runs
 * @param {{ path: string, order: string, filter: string, view: string, several: boolean, names: Map<string, string>, onSelect: () => void }} shown
 */
function runsTable(runs, { path, order, filter, view, several, names, onSelect }) {
  const paramKeys = [...new Set(runs.flatMap((r) => (r.data?.params ?? []).map((p) => p.key)))].sort();
  const metricKeys = [...new Set(runs.flatMap((r) => (r.data?.metrics ?? []).map((m) => m.key)))].sort();
  const withDeleted = Boolean(view) && view !== 'active';
  const [orderColumn, orderDir] = splitOrder(order);

  // `column` names the cells (params.<key>); `term` is what order_by sorts by.
  /**
   * @param {string} label
   * @param {string} column
   * @param {string} term
   * @param {'ASC' | 'DESC'} firstDir
   */
  const sortHeader = (label, column, term, firstDir) => {
    const active = orderColumn === term;
    const next = active ? (orderDir === 'DESC' ? 'ASC' : 'DESC') : firstDir;
    const th = h(
      'th',
      { scope: 'col', 'aria-sort': active ? (orderDir === 'DESC' ? 'descending' : 'ascending') : 'none', dataset: { column } },
      h(
        'button',
        {
          type: 'button',
          class: 'sort',
          title: `Sort by ${label}`,
          onclick: () => {
            location.hash = hashFor(path, { filter, order: `${term} ${next}`, view });
          },
        },
        label,
        active ? (orderDir === 'DESC' ? ' ▼' : ' ▲') : '',
      ),
    );
    return th;
  };

  const all = h('input', {
    type: 'checkbox',
    'aria-label': 'Select all runs shown',
    checked: runs.length > 0 && runs.every((r) => selection.has(r.info.run_id)),
  });
  all.addEventListener('change', () => {
    for (const r of runs) {
      if (all.checked) selection.add(r.info.run_id);
      else selection.delete(r.info.run_id);
    }
    for (const box of all.closest('table')?.querySelectorAll('tbody input[type=checkbox]') ?? [])
      if (box instanceof HTMLInputElement) box.checked = all.checked;
    onSelect();
  });
  const fixed = [
    h('th', { scope: 'col' }, all),
    sortHeader('Run', 'run_name', 'attributes.run_name', 'ASC'),
    several ? h('th', { scope: 'col' }, 'Experiment') : null,
    sortHeader('Status', 'status', 'attributes.status', 'ASC'),
    sortHeader('Started', 'start_time', 'attributes.start_time', 'DESC'),
    h('th', { scope: 'col' }, 'Duration'),
    withDeleted ? h('th', { scope: 'col' }, 'Lifecycle') : null,
  ].filter(Boolean);
  const groups = h(
    'tr',
    {},
    h('td', { colspan: fixed.length }),
    paramKeys.length ? h('th', { scope: 'colgroup', colspan: paramKeys.length, class: 'group' }, 'Parameters') : null,
    metricKeys.length ? h('th', { scope: 'colgroup', colspan: metricKeys.length, class: 'group' }, 'Metrics') : null,
  );
  const head = h(
    'tr',
    {},
    fixed,
    paramKeys.map((k) => sortHeader(k, `params.${k}`, `params.${quoteKey(k)}`, 'ASC')),
    metricKeys.map((k) => sortHeader(k, `metrics.${k}`, `metrics.${quoteKey(k)}`, 'DESC')),
  );

  const rows = runs.map((run) => {
    const params = byKey(run.data?.params);
    const metrics = byKey(run.data?.metrics);
    const id = run.info.run_id;
    const box = h('input', { type: 'checkbox', checked: selection.has(id), 'aria-label': `Select run ${runName(run)}` });
    box.addEventListener('change', () => {
      if (box.checked) selection.add(id);
      else selection.delete(id);
      onSelect();
    });
    return h(
      'tr',
      { dataset: { runId: id } },
      h('td', {}, box),
      h('th', { scope: 'row' }, link(`#/runs/${encodeURIComponent(id)}`, runName(run))),
      several ? h('td', {}, names.get(run.info.experiment_id) ?? run.info.experiment_id) : null,
      h('td', {}, run.info.status),
      h('td', {}, formatTime(run.info.start_time)),
      h('td', {}, formatDuration(run.info.start_time, run.info.end_time)),
      withDeleted
        ? h(
            'td',
            { dataset: { column: 'lifecycle' } },
            run.info.lifecycle_stage,
            ' ',
            run.info.lifecycle_stage === 'deleted'
              ? actionButton('Restore', `Restore run ${runName(run)}`, () => api('POST', 'runs/restore', { run_id: id }))
              : null,
          )
        : null,
      paramKeys.map((k) => h('td', { dataset: { column: `params.${k}` } }, params.get(k)?.value ?? '')),
      metricKeys.map((k) => {
        const m = metrics.get(k);
        return h(
          'td',
          { class: 'num', dataset: { column: `metrics.${k}` }, title: m ? `${m.value} at step ${m.step ?? 0}` : null },
          m ? formatNumber(m.value) : '',
        );
      }),
    );
  });
  if (!rows.length)
    rows.push(h('tr', {}, h('td', { colspan: fixed.length + paramKeys.length + metricKeys.length, class: 'muted' }, 'No runs.')));
  return h('table', { class: 'wide', id: 'runs' }, h('thead', {}, groups, head), h('tbody', {}, rows));
}

/**
 * An order_by term split into what it sorts by and its direction.
 * @param {string} order
 * @returns {[string, 'ASC' | 'DESC']}
 */
function splitOrder(order) {
  const m = /^(.*?)\s+(ASC|DESC)$/i.exec(order ?? '');
  return m ? [m[1] ?? '', m[2]?.toUpperCase() === 'DESC' ? 'DESC' : 'ASC'] : [order ?? '', 'ASC'];
}
