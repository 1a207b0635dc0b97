// The tracker's web UI: one ES module, no dependencies, no build step. Every view is a hash route (so pages are
// linkable) that reads the MLflow REST API under ajax-api/2.0/mlflow/. Data is only ever inserted as text nodes or
// attribute values through h()/svg(); nothing from the server goes through innerHTML.

const API = 'ajax-api/2.0/mlflow/';
const PAGE_SIZE = 100;
const PREVIEW_LIMIT = 1024 * 1024;
const COLORS = ['#2f6fae', '#d9534f', '#3c9d5d', '#e08a1e', '#7b4fb3', '#1a9ea8', '#b5466b', '#6b7480'];

const $view = document.getElementById('view');
const $error = document.getElementById('error');
/** Runs ticked in a runs table; kept across re-renders and experiments so runs of several can be compared. */
const selection = new Set();
let navigation = 0;

// ---------------------------------------------------------------- DOM

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function setAttrs(el, attrs) {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  return el;
}

/** An HTML element; text children become text nodes. */
function h(tag, attrs, ...children) {
  return append(setAttrs(document.createElement(tag), attrs), children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...children) {
  return append(setAttrs(document.createElementNS(SVG_NS, tag), attrs), children);
}

const link = (href, ...children) => h('a', { href }, ...children);
const section = (title, ...children) => h('section', {}, title ? h('h2', {}, title) : null, ...children);

function table(head, rows, attrs = {}) {
  return h('table', attrs, h('thead', {}, h('tr', {}, head.flat().map((c) => (c instanceof Node ? c : h('th', { scope: 'col' }, c))))), h('tbody', {}, rows));
}

// ---------------------------------------------------------------- formatting

/** The wire carries NaN and the infinities as strings and int64 may come as strings. */
const num = (v) => (typeof v === 'number' ? v : Number(v));

function formatNumber(v) {
  const n = num(v);
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return String(n);
  return String(Number(n.toPrecision(6)));
}

function formatTime(ms) {
  if (ms === undefined || ms === null || ms === '') return '';
  return new Date(num(ms)).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
}

function formatDuration(start, end) {
  if (!start || !end) return '';
  let s = Math.round((num(end) - num(start)) / 1000);
  const parts = [];
  for (const [unit, size] of [['h', 3600], ['m', 60]]) {
    if (s >= size) parts.push(`${Math.floor(s / size)}${unit}`);
    s %= size;
  }
  parts.push(`${s}s`);
  return parts.join(' ');
}

function formatBytes(n) {
  if (n === undefined || n === null) return '';
  const b = num(n);
  if (b < 1024) return `${b} B`;
  if (b < 1024 * 1024) return `${(b / 1024).toFixed(1)} KiB`;
  return `${(b / 1024 / 1024).toFixed(1)} MiB`;
}

const runName = (run) => run.info.run_name || run.info.run_id.slice(0, 8);
const byKey = (items) => new Map((items ?? []).map((i) => [i.key, i]));

// ---------------------------------------------------------------- API

class ApiError extends Error {}

async function api(method, endpoint, params = {}) {
  let url = API + endpoint;
  const init = { method, headers: { Accept: 'application/json' } };
  if (method === 'GET') {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined || value === null || value === '') continue;
      for (const v of Array.isArray(value) ? value : [value]) query.append(key, String(v));
    }
    const qs = query.toString();
    if (qs) url += `?${qs}`;
  } else {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(params);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let data = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = { message: text.slice(0, 300) };
  }
  if (!res.ok) {
    const code = data.error_code ? ` (${data.error_code})` : '';
    throw new ApiError(`${method} ${endpoint}: ${data.message || `${res.status} ${res.statusText}`}${code}`);
  }
  return data;
}

/** Every page of a paged GET, concatenated (`field` is the list in the answer). */
async function allPages(endpoint, params, field, limit = 10_000) {
  const items = [];
  let token;
  do {
    const page = await api('GET', endpoint, { ...params, page_token: token });
    items.push(...(page[field] ?? []));
    token = page.next_page_token;
  } while (token && items.length < limit);
  return items;
}

/** A run's file, through get-artifact: it resolves the run's own root (proxied or written out under the store's root). */
const artifactHref = (run, path) => `${API}get-artifact?${new URLSearchParams({ run_id: run.info.run_id, path })}`;

// ---------------------------------------------------------------- routing

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/experiments';
  const [path, query = ''] = raw.split('?');
  return { path, query: new URLSearchParams(query) };
}

function hashFor(path, query = {}) {
  const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== '')).toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}

const ROUTES = [
  [/^\/?$/, () => experimentsView()],
  [/^\/experiments$/, () => experimentsView()],
  [/^\/experiments\/([^/]+)$/, (m, q) => experimentView(decodeURIComponent(m[1]).split(','), q)],
  [/^\/runs\/([^/]+)$/, (m) => runView(decodeURIComponent(m[1]))],
  [/^\/compare$/, (_m, q) => compareView((q.get('runs') ?? '').split(',').filter(Boolean))],
  [/^\/models$/, () => modelsView()],
  [/^\/models\/(.+)$/, (m) => modelView(decodeURIComponent(m[1]))],
];

async function render() {
  const token = ++navigation;
  const { path, query } = parseHash();
  $error.hidden = true;
  $view.setAttribute('aria-busy', 'true');
  for (const [id, prefix] of [['nav-experiments', '/experiments'], ['nav-models', '/models']]) {
    const here = path === prefix || path.startsWith(`${prefix}/`) || (prefix === '/experiments' && (path === '/' || path === ''));
    document.getElementById(id).toggleAttribute('aria-current', false);
    if (here) document.getElementById(id).setAttribute('aria-current', 'page');
  }
  try {
    const route = ROUTES.find(([re]) => re.test(path));
    const node = route ? await route[1](route[0].exec(path), query) : h('p', {}, `No page at ${path}. `, link('#/experiments', 'Experiments'));
    if (token !== navigation) return; // a later navigation owns the view
    $view.replaceChildren(node);
  } catch (err) {
    if (token !== navigation) return;
    $view.replaceChildren();
    showError(err);
  } finally {
    if (token === navigation) $view.setAttribute('aria-busy', 'false');
  }
}

function showError(err) {
  $error.textContent = err instanceof Error ? err.message : String(err);
  $error.hidden = false;
}

/** Runs an action from a button or form; its failure shows in the page's alert instead of vanishing. */
const guarded = (fn) => async (event) => {
  try {
    await fn(event);
  } catch (err) {
    showError(err);
  }
};

// ---------------------------------------------------------------- experiments

async function experimentsView() {
  const chosen = new Set();
  const rows = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const compare = h('button', { type: 'button', disabled: true, id: 'compare-experiments' }, 'Show runs of selected');
  const search = h('input', { type: 'search', id: 'experiment-filter', placeholder: "name ILIKE '%churn%'" });
  let token;

  const load = async (reset) => {
    if (reset) {
      rows.replaceChildren();
      token = undefined;
    }
    const filter = search.value.trim();
    const page = await api('GET', 'experiments/search', {
      max_results: PAGE_SIZE,
      view_type: 'ACTIVE_ONLY',
      // Plain words search names; anything with an operator is taken as a search filter as it is.
      filter: filter && !/[=<>]|like/i.test(filter) ? `name ILIKE ${quote(`%${filter}%`)}` : filter,
      page_token: token,
    });
    token = page.next_page_token;
    more.hidden = !token;
    append(rows, (page.experiments ?? []).map((e) => experimentRow(e, chosen, compare)));
    if (!rows.children.length) rows.append(h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No experiments.')));
  };
  more.addEventListener('click', guarded(() => load(false)));
  compare.addEventListener('click', () => {
    location.hash = `#/experiments/${[...chosen].map(encodeURIComponent).join(',')}`;
  });
  const form = h(
    'form',
    { class: 'toolbar', role: 'search', onsubmit: guarded((e) => (e.preventDefault(), load(true))) },
    h('label', { for: 'experiment-filter' }, 'Filter'),
    search,
    h('button', { type: 'submit' }, 'Search'),
    compare,
  );
  await load(true);
  return section(
    'Experiments',
    form,
    h('table', { class: 'wide', id: 'experiments' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, h('span', { class: 'muted' }, 'Select')), ['Name', 'ID', 'Artifact location', 'Created', 'Last updated'].map((c) => h('th', { scope: 'col' }, c)))),
      rows),
    more,
  );
}

function experimentRow(e, chosen, compare) {
  const box = h('input', {
    type: 'checkbox',
    'aria-label': `Select experiment ${e.name}`,
    onchange: (ev) => {
      if (ev.target.checked) chosen.add(e.experiment_id);
      else chosen.delete(e.experiment_id);
      compare.disabled = chosen.size === 0;
    },
  });
  return h('tr', { dataset: { experimentId: e.experiment_id } },
    h('td', {}, box),
    h('td', {}, link(`#/experiments/${encodeURIComponent(e.experiment_id)}`, e.name)),
    h('td', {}, e.experiment_id),
    h('td', { class: 'mono' }, e.artifact_location ?? ''),
    h('td', {}, formatTime(e.creation_time)),
    h('td', {}, formatTime(e.last_update_time)));
}

// ---------------------------------------------------------------- runs table

/** A key as the search grammar reads it: bare when it is a plain name, else in backticks (doubled inside). */
function quoteKey(key) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : `\`${key.replace(/`/g, '``')}\``;
}

async function experimentView(ids, query) {
  const order = query.get('order') ?? '';
  const filter = query.get('filter') ?? '';
  const experiments = await Promise.all(ids.map((id) => api('GET', 'experiments/get', { experiment_id: id }).then((r) => r.experiment)));
  const names = new Map(experiments.map((e) => [e.experiment_id, e.name]));
  const runs = [];
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
    for (const box of holder.querySelectorAll('input[type=checkbox]')) box.checked = false;
  });

  const load = async () => {
    const page = await api('POST', 'runs/search', {
      experiment_ids: ids,
      filter,
      run_view_type: 'ACTIVE_ONLY',
      max_results: PAGE_SIZE,
      order_by: order ? [order] : [],
      page_token: token,
    });
    runs.push(...(page.runs ?? []));
    token = page.next_page_token;
    more.hidden = !token;
    count.textContent = `${runs.length} run${runs.length === 1 ? '' : 's'}${token ? ' loaded' : ''}`;
    holder.replaceChildren(runsTable(runs, { ids, order, filter, names, onSelect: updateCompare }));
  };
  more.addEventListener('click', guarded(load));
  await load();
  updateCompare();

  const filterInput = h('input', { type: 'search', id: 'run-filter', value: filter, placeholder: "metrics.rmse < 1 and params.model = 'tree'" });
  const form = h(
    'form',
    {
      class: 'toolbar',
      role: 'search',
      onsubmit: (e) => {
        e.preventDefault();
        location.hash = hashFor(`/experiments/${ids.map(encodeURIComponent).join(',')}`, { filter: filterInput.value.trim(), order });
      },
    },
    h('label', { for: 'run-filter' }, 'Filter runs'),
    filterInput,
    h('button', { type: 'submit' }, 'Search'),
    compare,
    clear,
    count,
  );
  const title = experiments.length === 1 ? `Experiment ${experiments[0].name}` : `Experiments ${experiments.map((e) => e.name).join(', ')}`;
  return h('div', {},
    h('p', { class: 'muted' }, link('#/experiments', 'Experiments'), ' / ', experiments.map((e) => e.name).join(', ')),
    section(title, form, holder, more));
}

function runsTable(runs, { ids, order, filter, names, onSelect }) {
  const paramKeys = [...new Set(runs.flatMap((r) => (r.data?.params ?? []).map((p) => p.key)))].sort();
  const metricKeys = [...new Set(runs.flatMap((r) => (r.data?.metrics ?? []).map((m) => m.key)))].sort();
  const several = ids.length > 1;
  const [orderColumn, orderDir] = splitOrder(order);

  // `column` names the cells (params.<key>); `term` is what order_by sorts by.
  const sortHeader = (label, column, term, firstDir) => {
    const active = orderColumn === term;
    const next = active ? (orderDir === 'DESC' ? 'ASC' : 'DESC') : firstDir;
    const th = h('th', { scope: 'col', 'aria-sort': active ? (orderDir === 'DESC' ? 'descending' : 'ascending') : 'none', dataset: { column } },
      h('button', {
        type: 'button',
        class: 'sort',
        title: `Sort by ${label}`,
        onclick: () => {
          location.hash = hashFor(`/experiments/${ids.map(encodeURIComponent).join(',')}`, { filter, order: `${term} ${next}` });
        },
      }, label, active ? (orderDir === 'DESC' ? ' ▼' : ' ▲') : ''));
    return th;
  };

  const all = h('input', {
    type: 'checkbox',
    'aria-label': 'Select all runs shown',
    checked: runs.length > 0 && runs.every((r) => selection.has(r.info.run_id)),
    onchange: (e) => {
      for (const r of runs) {
        if (e.target.checked) selection.add(r.info.run_id);
        else selection.delete(r.info.run_id);
      }
      for (const box of e.target.closest('table').querySelectorAll('tbody input[type=checkbox]')) box.checked = e.target.checked;
      onSelect();
    },
  });
  const fixed = [
    h('th', { scope: 'col' }, all),
    sortHeader('Run', 'run_name', 'attributes.run_name', 'ASC'),
    several ? h('th', { scope: 'col' }, 'Experiment') : null,
    sortHeader('Status', 'status', 'attributes.status', 'ASC'),
    sortHeader('Started', 'start_time', 'attributes.start_time', 'DESC'),
    h('th', { scope: 'col' }, 'Duration'),
  ].filter(Boolean);
  const groups = h('tr', {},
    h('td', { colspan: fixed.length }),
    paramKeys.length ? h('th', { scope: 'colgroup', colspan: paramKeys.length, class: 'group' }, 'Parameters') : null,
    metricKeys.length ? h('th', { scope: 'colgroup', colspan: metricKeys.length, class: 'group' }, 'Metrics') : null);
  const head = h('tr', {},
    fixed,
    paramKeys.map((k) => sortHeader(k, `params.${k}`, `params.${quoteKey(k)}`, 'ASC')),
    metricKeys.map((k) => sortHeader(k, `metrics.${k}`, `metrics.${quoteKey(k)}`, 'DESC')));

  const rows = runs.map((run) => {
    const params = byKey(run.data?.params);
    const metrics = byKey(run.data?.metrics);
    const id = run.info.run_id;
    const box = h('input', {
      type: 'checkbox',
      checked: selection.has(id),
      'aria-label': `Select run ${runName(run)}`,
      onchange: (e) => {
        if (e.target.checked) selection.add(id);
        else selection.delete(id);
        onSelect();
      },
    });
    return h('tr', { dataset: { runId: id } },
      h('td', {}, box),
      h('th', { scope: 'row' }, link(`#/runs/${encodeURIComponent(id)}`, runName(run))),
      several ? h('td', {}, names.get(run.info.experiment_id) ?? run.info.experiment_id) : null,
      h('td', {}, run.info.status),
      h('td', {}, formatTime(run.info.start_time)),
      h('td', {}, formatDuration(run.info.start_time, run.info.end_time)),
      paramKeys.map((k) => h('td', { dataset: { column: `params.${k}` } }, params.get(k)?.value ?? '')),
      metricKeys.map((k) => {
        const m = metrics.get(k);
        return h('td', { class: 'num', dataset: { column: `metrics.${k}` }, title: m ? `${m.value} at step ${m.step ?? 0}` : null }, m ? formatNumber(m.value) : '');
      }));
  });
  if (!rows.length) rows.push(h('tr', {}, h('td', { colspan: fixed.length + paramKeys.length + metricKeys.length, class: 'muted' }, 'No runs.')));
  return h('table', { class: 'wide', id: 'runs' }, h('thead', {}, groups, head), h('tbody', {}, rows));
}

function splitOrder(order) {
  const m = /^(.*?)\s+(ASC|DESC)$/i.exec(order ?? '');
  return m ? [m[1], m[2].toUpperCase()] : [order ?? '', 'ASC'];
}

// ---------------------------------------------------------------- run page

async function runView(runId) {
  const { run } = await api('GET', 'runs/get', { run_id: runId });
  const experiment = await api('GET', 'experiments/get', { experiment_id: run.info.experiment_id }).then((r) => r.experiment, () => null);
  const info = run.info;
  const tags = run.data?.tags ?? [];
  const userTags = tags.filter((t) => !t.key.startsWith('mlflow.'));
  const systemTags = tags.filter((t) => t.key.startsWith('mlflow.'));
  const expName = experiment?.name ?? info.experiment_id;

  const facts = h('dl', { class: 'facts' },
    [
      ['Run ID', h('span', { class: 'mono' }, info.run_id)],
      ['Experiment', link(`#/experiments/${encodeURIComponent(info.experiment_id)}`, expName)],
      ['Status', info.status],
      ['User', info.user_id ?? ''],
      ['Started', formatTime(info.start_time)],
      ['Ended', formatTime(info.end_time)],
      ['Duration', formatDuration(info.start_time, info.end_time)],
      ['Artifact URI', h('span', { class: 'mono' }, info.artifact_uri ?? '')],
    ].map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));

  const metrics = [...(run.data?.metrics ?? [])].sort((a, b) => a.key.localeCompare(b.key));
  const params = [...(run.data?.params ?? [])].sort((a, b) => a.key.localeCompare(b.key));
  return h('div', {},
    h('p', { class: 'muted' }, link('#/experiments', 'Experiments'), ' / ', link(`#/experiments/${encodeURIComponent(info.experiment_id)}`, expName), ' / ', runName(run)),
    section(`Run ${runName(run)}`, facts, h('p', {}, link(hashFor('/compare', { runs: info.run_id }), 'Metric charts'))),
    h('div', { class: 'grid2' },
      section('Parameters', keyValueTable(params, 'params', 'No parameters.')),
      section('Metrics',
        metrics.length
          ? table(['Name', 'Latest value', 'Step', 'Logged'], metrics.map((m) => h('tr', {}, h('th', { scope: 'row' }, m.key), h('td', { class: 'num', title: String(m.value) }, formatNumber(m.value)), h('td', { class: 'num' }, m.step ?? 0), h('td', {}, formatTime(m.timestamp)))), { id: 'metrics', class: 'wide' })
          : h('p', { class: 'muted' }, 'No metrics.')),
      section('Tags',
        keyValueTable(userTags, 'tags', 'No tags.'),
        systemTags.length ? h('details', {}, h('summary', {}, `System tags (${systemTags.length})`), keyValueTable(systemTags, 'system-tags', '')) : null)),
    await artifactBrowser(run));
}

function keyValueTable(items, id, empty) {
  if (!items.length) return h('p', { class: 'muted' }, empty);
  return table(['Name', 'Value'], items.map((i) => h('tr', {}, h('th', { scope: 'row' }, i.key), h('td', {}, i.value))), { id, class: 'wide' });
}

// ---------------------------------------------------------------- artifacts

async function artifactBrowser(run) {
  const preview = h('div', { id: 'artifact-preview' });
  const root = await artifactList(run, '', preview);
  root.classList.add('root');
  root.id = 'artifacts';
  return section('Artifacts', root, preview);
}

async function artifactList(run, path, preview) {
  const files = await allPages('artifacts/list', { run_id: run.info.run_id, path: path || undefined }, 'files');
  files.sort((a, b) => Number(b.is_dir) - Number(a.is_dir) || a.path.localeCompare(b.path));
  const ul = h('ul', { class: 'tree' });
  if (!files.length && !path) ul.append(h('li', { class: 'muted' }, 'No artifacts.'));
  for (const file of files) ul.append(file.is_dir ? folderItem(run, file, preview) : fileItem(run, file, preview));
  return ul;
}

function folderItem(run, file, preview) {
  const name = file.path.split('/').pop();
  const li = h('li', { dataset: { path: file.path } });
  let children = null;
  const toggle = h('button', {
    type: 'button',
    class: 'link',
    'aria-expanded': 'false',
    'aria-label': `Folder ${file.path}`,
    onclick: guarded(async () => {
      const open = toggle.getAttribute('aria-expanded') === 'true';
      if (open) {
        toggle.setAttribute('aria-expanded', 'false');
        children.hidden = true;
        return;
      }
      if (!children) {
        children = await artifactList(run, file.path, preview);
        li.append(children);
      }
      children.hidden = false;
      toggle.setAttribute('aria-expanded', 'true');
    }),
  }, `${name}/`);
  return append(li, [toggle]);
}

function fileItem(run, file, preview) {
  const name = file.path.split('/').pop();
  const href = artifactHref(run, file.path);
  const size = file.file_size === undefined ? null : num(file.file_size);
  const show = h('button', {
    type: 'button',
    class: 'link',
    'aria-label': `Preview ${file.path}`,
    onclick: guarded(() => showPreview(href, file.path, preview)),
  }, 'Preview');
  if (size !== null && size > PREVIEW_LIMIT) show.disabled = true;
  return h('li', { dataset: { path: file.path } },
    h('span', { class: 'file' }, name),
    h('span', { class: 'muted size' }, formatBytes(size)),
    h('span', { class: 'actions' }, h('a', { href, download: name, 'aria-label': `Download ${file.path}` }, 'Download'), show));
}

async function showPreview(href, path, preview) {
  const res = await fetch(href);
  if (!res.ok) throw new ApiError(`Download of ${path} failed: ${res.status} ${res.statusText}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const head = bytes.subarray(0, Math.min(bytes.length, 8000));
  const binary = head.includes(0);
  const body = binary
    ? h('p', { class: 'muted' }, `${path} is binary (${formatBytes(bytes.length)}); download it instead.`)
    : h('pre', { class: 'preview', tabindex: 0 }, new TextDecoder().decode(bytes.subarray(0, PREVIEW_LIMIT)));
  preview.replaceChildren(h('h3', {}, path), body);
}

// ---------------------------------------------------------------- comparison

async function compareView(runIds) {
  if (!runIds.length) return section('Compare runs', h('p', { class: 'muted' }, 'Select runs in an experiment\'s runs table first.'));
  const runs = await Promise.all(runIds.map((id) => api('GET', 'runs/get', { run_id: id }).then((r) => r.run)));
  const colors = new Map(runs.map((r, i) => [r.info.run_id, COLORS[i % COLORS.length]]));
  const experiments = new Map(await Promise.all([...new Set(runs.map((r) => r.info.experiment_id))].map((id) =>
    api('GET', 'experiments/get', { experiment_id: id }).then((e) => [id, e.experiment.name], () => [id, id]))));
  // A fresh header per table: a DOM node lives in one place only.
  const header = () => [h('td', {}), runs.map((r) => h('th', { scope: 'col' }, link(`#/runs/${encodeURIComponent(r.info.run_id)}`, runName(r))))];

  const side = (label, id, pick, format) => {
    const keys = [...new Set(runs.flatMap((r) => (pick(r) ?? []).map((i) => i.key)))].sort();
    if (!keys.length) return section(label, h('p', { class: 'muted' }, `No ${label.toLowerCase()}.`));
    const rows = keys.map((k) => {
      const values = runs.map((r) => byKey(pick(r)).get(k)?.value);
      const differs = new Set(values.map((v) => (v === undefined ? '' : String(v)))).size > 1;
      return h('tr', { class: differs ? 'differs' : null },
        h('th', { scope: 'row' }, k, differs ? h('span', { class: 'muted' }, ' (differs)') : null),
        values.map((v) => h('td', { class: format === formatNumber ? 'num' : null }, v === undefined ? '' : format(v))));
    });
    return section(label, table(header(), rows, { id, class: 'wide' }));
  };

  const metricKeys = [...new Set(runs.flatMap((r) => (r.data?.metrics ?? []).map((m) => m.key)))].sort();
  const charts = await Promise.all(metricKeys.map(async (key) => {
    const withKey = runs.filter((r) => byKey(r.data?.metrics).has(key));
    const points = await chartPoints(withKey.map((r) => r.info.run_id), key);
    const series = withKey.map((r) => ({
      id: r.info.run_id,
      label: runName(r),
      color: colors.get(r.info.run_id),
      points: (points.get(r.info.run_id) ?? []).sort((a, b) => a.x - b.x || a.t - b.t),
    }));
    return metricChart(key, series);
  }));

  return h('div', {},
    section(`Compare ${runs.length} run${runs.length === 1 ? '' : 's'}`,
      table(header(), [
        h('tr', {}, h('th', { scope: 'row' }, 'Experiment'), runs.map((r) => h('td', {}, link(`#/experiments/${encodeURIComponent(r.info.experiment_id)}`, experiments.get(r.info.experiment_id))))),
        h('tr', {}, h('th', { scope: 'row' }, 'Status'), runs.map((r) => h('td', {}, r.info.status))),
        h('tr', {}, h('th', { scope: 'row' }, 'Started'), runs.map((r) => h('td', {}, formatTime(r.info.start_time)))),
      ], { class: 'wide', id: 'compare-runs' })),
    h('div', { class: 'grid2' },
      side('Parameters', 'compare-params', (r) => r.data?.params, String),
      side('Metrics', 'compare-metrics', (r) => r.data?.metrics, formatNumber)),
    section('Metric charts', metricKeys.length ? h('div', { class: 'charts', id: 'charts' }, charts) : h('p', { class: 'muted' }, 'No metrics.')));
}

/**
 * One metric's points for many runs in one request per hundred runs (the server's bound), sampled by the server to
 * at most CHART_POINTS per run, first and last kept: a run with a million steps still draws from a small answer.
 */
const CHART_POINTS = 1000;
async function chartPoints(runIds, key) {
  const byRun = new Map();
  for (let i = 0; i < runIds.length; i += 100) {
    const page = await api('GET', 'metrics/get-history-bulk-interval', { run_ids: runIds.slice(i, i + 100), metric_key: key, max_results: CHART_POINTS });
    for (const m of page.metrics ?? []) {
      if (!byRun.has(m.run_id)) byRun.set(m.run_id, []);
      byRun.get(m.run_id).push({ x: num(m.step ?? 0), t: num(m.timestamp ?? 0), y: num(m.value) });
    }
  }
  return byRun;
}

// ---------------------------------------------------------------- chart

/** Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten. */
function ticks(lo, hi, count = 5) {
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => raw <= s * (1 + 1e-9)) ?? 10 * power;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** [min, max] of the values widened by `margin` of the range (a single value gets a range around it). */
function domain(values, margin = 0) {
  let lo = values.reduce((a, b) => Math.min(a, b), Infinity);
  let hi = values.reduce((a, b) => Math.max(a, b), -Infinity);
  if (lo === hi) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    return [lo - pad, hi + pad];
  }
  const pad = (hi - lo) * margin;
  return [lo - pad, hi + pad];
}

let chartSeq = 0;

/** A line chart of one metric over steps, one line per run; points that are not finite break the line. */
function metricChart(key, series) {
  const W = 640;
  const H = 300;
  const m = { top: 16, right: 16, bottom: 44, left: 64 };
  const finite = series.flatMap((s) => s.points.filter((p) => Number.isFinite(p.y)));
  const id = `chart-${++chartSeq}`;
  const figure = h('figure', { dataset: { metric: key } }, h('figcaption', { id: `${id}-title` }, key));
  if (!finite.length) return append(figure, [h('p', { class: 'muted' }, 'No finite values to plot.')]);

  const [x0, x1] = domain(finite.map((p) => p.x));
  const [y0, y1] = domain(finite.map((p) => p.y), 0.05);
  const sx = (x) => m.left + ((x - x0) / (x1 - x0)) * (W - m.left - m.right);
  const sy = (y) => H - m.bottom - ((y - y0) / (y1 - y0)) * (H - m.top - m.bottom);
  const xt = ticks(x0, x1).filter(Number.isInteger); // steps are whole numbers
  const yt = ticks(y0, y1);
  const round = (v) => Math.round(v * 10) / 10;

  const chart = svg('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-title ${id}-desc` },
    svg('desc', { id: `${id}-desc` }, `${key} over steps for ${series.map((s) => s.label).join(', ')}`),
    svg('g', { class: 'grid' }, yt.map((t) => svg('line', { x1: m.left, x2: W - m.right, y1: round(sy(t)), y2: round(sy(t)) }))),
    svg('g', { class: 'axis x-axis' },
      svg('line', { x1: m.left, x2: W - m.right, y1: H - m.bottom, y2: H - m.bottom }),
      xt.map((t) => svg('g', {},
        svg('line', { x1: round(sx(t)), x2: round(sx(t)), y1: H - m.bottom, y2: H - m.bottom + 4 }),
        svg('text', { x: round(sx(t)), y: H - m.bottom + 16, 'text-anchor': 'middle' }, formatNumber(t)))),
      svg('text', { class: 'axis-label', x: m.left + (W - m.left - m.right) / 2, y: H - 6, 'text-anchor': 'middle' }, 'step')),
    svg('g', { class: 'axis y-axis' },
      svg('line', { x1: m.left, x2: m.left, y1: m.top, y2: H - m.bottom }),
      yt.map((t) => svg('g', {},
        svg('line', { x1: m.left - 4, x2: m.left, y1: round(sy(t)), y2: round(sy(t)) }),
        svg('text', { x: m.left - 7, y: round(sy(t)) + 4, 'text-anchor': 'end' }, formatNumber(t)))),
      svg('text', { class: 'axis-label', transform: `translate(14 ${m.top + (H - m.top - m.bottom) / 2}) rotate(-90)`, 'text-anchor': 'middle' }, key)),
    svg('g', { class: 'lines' }, series.map((s) => {
      let d = '';
      let pen = 'M';
      let plotted = 0;
      for (const p of s.points) {
        if (!Number.isFinite(p.y)) {
          pen = 'M';
          continue;
        }
        d += `${pen}${round(sx(p.x))},${round(sy(p.y))} `;
        pen = 'L';
        plotted++;
      }
      return svg('g', { class: 'run-series', dataset: { runId: s.id } },
        svg('path', { class: 'series', d: d.trim(), stroke: s.color, dataset: { runId: s.id, points: plotted } }, svg('title', {}, `${s.label}: ${plotted} points`)),
        plotted <= 100 ? s.points.filter((p) => Number.isFinite(p.y)).map((p) => svg('circle', { cx: round(sx(p.x)), cy: round(sy(p.y)), r: 2.5, fill: s.color }, svg('title', {}, `${s.label} · step ${p.x}: ${p.y}`))) : null);
    })));

  const legend = h('ul', { class: 'legend' }, series.map((s) => {
    const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
    swatch.style.background = s.color;
    return h('li', {}, swatch, s.label);
  }));
  return append(figure, [chart, legend, chartData(key, series)]);
}

/** The chart's numbers as a table, for screen readers and for copying. */
function chartData(key, series) {
  const steps = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  const last = series.map((s) => new Map(s.points.map((p) => [p.x, p.y])));
  return h('details', {},
    h('summary', {}, 'Data'),
    table(['step', ...series.map((s) => s.label)], steps.map((x) => h('tr', {}, h('td', { class: 'num' }, x), last.map((m) => h('td', { class: 'num' }, m.has(x) ? formatNumber(m.get(x)) : '')))), { 'aria-label': `${key} by step` }));
}

// ---------------------------------------------------------------- models

async function modelsView() {
  const rows = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const search = h('input', { type: 'search', id: 'model-filter', placeholder: 'model name contains…' });
  let token;
  const load = async (reset) => {
    if (reset) {
      rows.replaceChildren();
      token = undefined;
    }
    const q = search.value.trim();
    const page = await api('GET', 'registered-models/search', {
      max_results: PAGE_SIZE,
      filter: q ? `name ILIKE ${quote(`%${q}%`)}` : undefined,
      page_token: token,
    });
    token = page.next_page_token;
    more.hidden = !token;
    append(rows, (page.registered_models ?? []).map(modelRow));
    if (!rows.children.length) rows.append(h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No registered models.')));
  };
  more.addEventListener('click', guarded(() => load(false)));
  await load(true);
  return section('Registered models',
    h('form', { class: 'toolbar', role: 'search', onsubmit: guarded((e) => (e.preventDefault(), load(true))) },
      h('label', { for: 'model-filter' }, 'Filter'), search, h('button', { type: 'submit' }, 'Search')),
    h('table', { class: 'wide', id: 'models' },
      h('thead', {}, h('tr', {}, ['Name', 'Latest versions', 'Aliases', 'Last modified', 'Description'].map((c) => h('th', { scope: 'col' }, c)))),
      rows),
    more);
}

const stageBadge = (stage) => h('span', { class: `badge stage-${stage || 'None'}` }, stage || 'None');
const aliasBadge = (alias) => h('span', { class: 'badge alias' }, `@${alias}`);

function modelRow(model) {
  const latest = [...(model.latest_versions ?? [])].sort((a, b) => num(b.version) - num(a.version));
  return h('tr', { dataset: { model: model.name } },
    h('th', { scope: 'row' }, link(`#/models/${encodeURIComponent(model.name)}`, model.name)),
    h('td', {}, latest.map((v) => h('span', {}, `v${v.version} `, stageBadge(v.current_stage), ' '))),
    h('td', {}, (model.aliases ?? []).map((a) => h('span', {}, aliasBadge(a.alias), `→ v${a.version} `))),
    h('td', {}, formatTime(model.last_updated_timestamp)),
    h('td', {}, model.description ?? ''));
}

/** A string literal of the search grammar (a quote inside is doubled). */
const quote = (s) => `'${s.replace(/'/g, "''")}'`;
const nameFilter = (name) => `name=${quote(name)}`;

async function modelView(name) {
  const [{ registered_model: model }, versions] = await Promise.all([
    api('GET', 'registered-models/get', { name }),
    allPages('model-versions/search', { filter: nameFilter(name), max_results: 1000 }, 'model_versions'),
  ]);
  const aliasesOf = new Map();
  for (const a of model.aliases ?? []) aliasesOf.set(String(a.version), [...(aliasesOf.get(String(a.version)) ?? []), a.alias]);
  versions.sort((a, b) => num(b.version) - num(a.version));
  // Source runs by name; a run that is gone (or unreadable) shows its id.
  const runNames = new Map(await Promise.all([...new Set(versions.map((v) => v.run_id).filter(Boolean))].map((id) =>
    api('GET', 'runs/get', { run_id: id }).then((r) => [id, runName(r.run)], () => [id, id]))));

  const rows = versions.map((v) => {
    const aliases = v.aliases?.length ? v.aliases : aliasesOf.get(String(v.version)) ?? [];
    return h('tr', { dataset: { version: v.version } },
      h('th', { scope: 'row' }, `Version ${v.version}`),
      h('td', { dataset: { column: 'stage' } }, stageBadge(v.current_stage)),
      h('td', { dataset: { column: 'aliases' } }, aliases.map(aliasBadge)),
      h('td', {}, v.run_id ? h('a', { href: `#/runs/${encodeURIComponent(v.run_id)}`, title: v.run_id }, runNames.get(v.run_id)) : ''),
      h('td', { class: 'mono' }, v.source ?? ''),
      h('td', {}, v.status ?? ''),
      h('td', {}, formatTime(v.creation_timestamp)),
      h('td', {}, v.description ?? ''));
  });
  if (!rows.length) rows.push(h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'No versions.')));
  return h('div', {},
    h('p', { class: 'muted' }, link('#/models', 'Models'), ' / ', model.name),
    section(`Model ${model.name}`,
      model.description ? h('p', {}, model.description) : null,
      h('dl', { class: 'facts' },
        h('dt', {}, 'Created'), h('dd', {}, formatTime(model.creation_timestamp)),
        h('dt', {}, 'Last modified'), h('dd', {}, formatTime(model.last_updated_timestamp)),
        h('dt', {}, 'Aliases'), h('dd', {}, (model.aliases ?? []).map((a) => h('span', {}, aliasBadge(a.alias), `→ v${a.version} `))))),
    section('Versions', table(['Version', 'Stage', 'Aliases', 'Source run', 'Source', 'Status', 'Registered', 'Description'], rows, { id: 'versions', class: 'wide' })),
    model.tags?.length ? section('Tags', keyValueTable(model.tags, 'model-tags', '')) : null);
}

// ---------------------------------------------------------------- start

window.addEventListener('hashchange', render);
render();
