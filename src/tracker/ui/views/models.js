// @ts-check
// The model registry: registered models with their latest versions, and one model's description (edited through
// registered-models/update), tags (registered-models/set-tag and delete-tag, the client's calls) and versions with
// stages, aliases (set and removed in model-alias.js), tags and source runs; each version opens on its own page
// (model-version.js).
import { allPages, api, PAGE_SIZE } from '../api.js';
import { append, h } from '../dom.js';
import { tagEditor } from '../edit.js';
import { formatTime, num, quote, runName } from '../format.js';
import { link, section, table } from '../parts.js';
import { noteEditor } from '../note.js';
import { guarded } from '../router.js';
import { aliasEditor } from './model-alias.js';
import { versionHref } from './model-version.js';

/** @typedef {import('../types.ts').RegisteredModel} RegisteredModel */

export async function modelsView() {
  const rows = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const search = h('input', { type: 'search', id: 'model-filter', placeholder: 'model name contains…' });
  /** @type {string | undefined} */
  let token;
  /** @param {boolean} reset */
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
  more.addEventListener(
    'click',
    guarded(() => load(false)),
  );
  await load(true);
  return section(
    'Registered models',
    h(
      'form',
      { class: 'toolbar', role: 'search', onsubmit: guarded((e) => (e.preventDefault(), load(true))) },
      h('label', { for: 'model-filter' }, 'Filter'),
      search,
      h('button', { type: 'submit' }, 'Search'),
    ),
    h(
      'table',
      { class: 'wide', id: 'models' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Name', 'Latest versions', 'Aliases', 'Last modified', 'Description'].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      rows,
    ),
    more,
  );
}

/** @param {string | undefined} stage */
const stageBadge = (stage) => h('span', { class: `badge stage-${stage || 'None'}` }, stage || 'None');
/** @param {string} alias */
const aliasBadge = (alias) => h('span', { class: 'badge alias' }, `@${alias}`);

/** @param {RegisteredModel} model */
function modelRow(model) {
  const latest = [...(model.latest_versions ?? [])].sort((a, b) => num(b.version) - num(a.version));
  return h(
    'tr',
    { dataset: { model: model.name } },
    h('th', { scope: 'row' }, link(`#/models/${encodeURIComponent(model.name)}`, model.name)),
    h(
      'td',
      {},
      latest.map((v) => h('span', {}, `v${v.version} `, stageBadge(v.current_stage), ' ')),
    ),
    h(
      'td',
      {},
      (model.aliases ?? []).map((a) => h('span', {}, aliasBadge(a.alias), `→ v${a.version} `)),
    ),
    h('td', {}, formatTime(model.last_updated_timestamp)),
    h('td', {}, model.description ?? ''),
  );
}

/** @param {string} name */
const nameFilter = (name) => `name=${quote(name)}`;

/** @param {string} name */
export async function modelView(name) {
  const [{ registered_model: model }, versions] = await Promise.all([
    api('GET', 'registered-models/get', { name }),
    allPages('model-versions/search', { filter: nameFilter(name), max_results: 1000 }, (page) => page.model_versions),
  ]);
  /** @type {Map<string, string[]>} */
  const aliasesOf = new Map();
  for (const a of model.aliases ?? []) aliasesOf.set(String(a.version), [...(aliasesOf.get(String(a.version)) ?? []), a.alias]);
  versions.sort((a, b) => num(b.version) - num(a.version));
  // Source runs by name; a run that is gone (or unreadable) shows its id.
  const runIds = [...new Set(versions.flatMap((v) => (v.run_id ? [v.run_id] : [])))];
  const runNames = new Map(
    await Promise.all(
      runIds.map((id) =>
        api('GET', 'runs/get', { run_id: id }).then(
          (r) => /** @type {const} */ ([id, runName(r.run)]),
          () => /** @type {const} */ ([id, id]),
        ),
      ),
    ),
  );

  const rows = versions.map((v) => {
    const aliases = v.aliases?.length ? v.aliases : (aliasesOf.get(String(v.version)) ?? []);
    return h(
      'tr',
      { dataset: { version: v.version } },
      h('th', { scope: 'row' }, `Version ${v.version}`),
      h('td', { dataset: { column: 'stage' } }, stageBadge(v.current_stage)),
      h('td', { dataset: { column: 'aliases' } }, aliases.map(aliasBadge)),
      h('td', {}, v.run_id ? h('a', { href: `#/runs/${encodeURIComponent(v.run_id)}`, title: v.run_id }, runNames.get(v.run_id)) : ''),
      h('td', { class: 'mono' }, v.source ?? ''),
      h('td', {}, v.status ?? ''),
      h('td', {}, formatTime(v.creation_timestamp)),
      h('td', {}, v.description ?? ''),
      h(
        'td',
        { dataset: { column: 'tags' } },
        (v.tags ?? []).map((t) => h('span', { class: 'badge' }, `${t.key}: ${t.value}`)),
      ),
      h('td', { dataset: { column: 'edit-aliases' } }, aliasEditor(model.name, String(v.version), aliases)),
      h('td', {}, h('a', { href: versionHref(model.name, String(v.version)), 'aria-label': `Open version ${v.version}` }, 'Open')),
    );
  });
  if (!rows.length) rows.push(h('tr', {}, h('td', { colspan: 11, class: 'muted' }, 'No versions.')));
  return h(
    'div',
    {},
    h('p', { class: 'muted' }, link('#/models', 'Models'), ' / ', model.name),
    section(
      `Model ${model.name}`,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Created'),
        h('dd', {}, formatTime(model.creation_timestamp)),
        h('dt', {}, 'Last modified'),
        h('dd', {}, formatTime(model.last_updated_timestamp)),
        h('dt', {}, 'Aliases'),
        h(
          'dd',
          {},
          (model.aliases ?? []).map((a) => h('span', {}, aliasBadge(a.alias), `→ v${a.version} `)),
        ),
      ),
    ),
    await noteEditor({
      title: 'Description',
      text: model.description ?? '',
      empty: 'No description.',
      save: (description) => api('PATCH', 'registered-models/update', { name: model.name, description }),
    }),
    section(
      'Versions',
      table(
        ['Version', 'Stage', 'Aliases', 'Source run', 'Source', 'Status', 'Registered', 'Description', 'Tags', 'Edit aliases', ''],
        rows,
        {
          id: 'versions',
          class: 'wide',
        },
      ),
    ),
    tagEditor(
      model.tags ?? [],
      (key, value) => api('POST', 'registered-models/set-tag', { name: model.name, key, value }),
      (key) => api('DELETE', 'registered-models/delete-tag', { name: model.name, key }),
    ),
  );
}
