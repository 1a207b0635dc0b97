// @ts-check
// The experiments list: a filter, a page at a time, and a selection whose runs open in one table; the deleted ones
// are listed on asking (the link's `view`), each with a button that restores it (experiment-edit.js).
import { api, PAGE_SIZE } from '../api.js';
import { append, h } from '../dom.js';
import { formatTime, quote } from '../format.js';
import { link, section } from '../parts.js';
import { guarded, hashFor } from '../router.js';
import { experimentLifecycleButton, viewType, viewTypeSelect } from './experiment-edit.js';

/** @typedef {import('../types.ts').Experiment} Experiment */

/** @param {URLSearchParams} query `view`: active, deleted or all experiments */
export async function experimentsView(query) {
  const view = query.get('view') ?? '';
  const withDeleted = Boolean(view) && view !== 'active';
  /** @type {Set<string>} */
  const chosen = new Set();
  const rows = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const compare = h('button', { type: 'button', disabled: true, id: 'compare-experiments' }, 'Show runs of selected');
  const search = h('input', { type: 'search', id: 'experiment-filter', placeholder: "name ILIKE '%churn%'" });
  /** @type {string | undefined} */
  let token;

  /** @param {boolean} reset */
  const load = async (reset) => {
    if (reset) {
      rows.replaceChildren();
      token = undefined;
    }
    const filter = search.value.trim();
    const page = await api('GET', 'experiments/search', {
      max_results: PAGE_SIZE,
      view_type: viewType(view),
      // Plain words search names; anything with an operator is taken as a search filter as it is.
      filter: filter && !/[=<>]|like/i.test(filter) ? `name ILIKE ${quote(`%${filter}%`)}` : filter,
      page_token: token,
    });
    token = page.next_page_token;
    more.hidden = !token;
    append(
      rows,
      (page.experiments ?? []).map((e) => experimentRow(e, chosen, compare, withDeleted)),
    );
    if (!rows.children.length) rows.append(h('tr', {}, h('td', { colspan: withDeleted ? 7 : 6, class: 'muted' }, 'No experiments.')));
  };
  more.addEventListener(
    'click',
    guarded(() => load(false)),
  );
  compare.addEventListener('click', () => {
    location.hash = `#/experiments/${[...chosen].map(encodeURIComponent).join(',')}`;
  });
  const form = h(
    'form',
    { class: 'toolbar', role: 'search', onsubmit: guarded((e) => (e.preventDefault(), load(true))) },
    h('label', { for: 'experiment-filter' }, 'Filter'),
    search,
    h('button', { type: 'submit' }, 'Search'),
    viewTypeSelect('experiment-view', view, (v) => {
      location.hash = hashFor('/experiments', { view: v === 'active' ? '' : v });
    }),
    compare,
  );
  await load(true);
  return section(
    'Experiments',
    form,
    h(
      'table',
      { class: 'wide', id: 'experiments' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, h('span', { class: 'muted' }, 'Select')),
          ['Name', 'ID', 'Artifact location', 'Created', 'Last updated', withDeleted ? 'Lifecycle' : null].map((c) =>
            c ? h('th', { scope: 'col' }, c) : null,
          ),
        ),
      ),
      rows,
    ),
    more,
  );
}

/**
 * @param {Experiment} e
 * @param {Set<string>} chosen
 * @param {HTMLButtonElement} compare
 * @param {boolean} withDeleted
 */
function experimentRow(e, chosen, compare, withDeleted) {
  const box = h('input', {
    type: 'checkbox',
    'aria-label': `Select experiment ${e.name}`,
    onchange: () => {
      if (box.checked) chosen.add(e.experiment_id);
      else chosen.delete(e.experiment_id);
      compare.disabled = chosen.size === 0;
    },
  });
  return h(
    'tr',
    { dataset: { experimentId: e.experiment_id } },
    h('td', {}, box),
    h('td', {}, link(`#/experiments/${encodeURIComponent(e.experiment_id)}`, e.name)),
    h('td', {}, e.experiment_id),
    h('td', { class: 'mono' }, e.artifact_location ?? ''),
    h('td', {}, formatTime(e.creation_time)),
    h('td', {}, formatTime(e.last_update_time)),
    withDeleted
      ? h(
          'td',
          { dataset: { column: 'lifecycle' } },
          e.lifecycle_stage,
          ' ',
          e.lifecycle_stage === 'deleted' ? experimentLifecycleButton(e) : null,
        )
      : null,
  );
}
