// @ts-check
// The experiments list: a filter, a page at a time, and a selection whose runs open in one table.
import { api, PAGE_SIZE } from '../api.js';
import { append, h } from '../dom.js';
import { formatTime, quote } from '../format.js';
import { link, section } from '../parts.js';
import { guarded } from '../router.js';

/** @typedef {import('../types.ts').Experiment} Experiment */

export async function experimentsView() {
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
      view_type: 'ACTIVE_ONLY',
      // Plain words search names; anything with an operator is taken as a search filter as it is.
      filter: filter && !/[=<>]|like/i.test(filter) ? `name ILIKE ${quote(`%${filter}%`)}` : filter,
      page_token: token,
    });
    token = page.next_page_token;
    more.hidden = !token;
    append(
      rows,
      (page.experiments ?? []).map((e) => experimentRow(e, chosen, compare)),
    );
    if (!rows.children.length) rows.append(h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No experiments.')));
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
          ['Name', 'ID', 'Artifact location', 'Created', 'Last updated'].map((c) => h('th', { scope: 'col' }, c)),
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
 */
function experimentRow(e, chosen, compare) {
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
  );
}
