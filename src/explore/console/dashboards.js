// @ts-check
// "My dashboards": the caller's own (GET /dashboards?scope=mine) and those shared with them (scope=shared), each a
// link into the runtime. Own ones can be shared (the share form under the results, pointed at the one chosen) and
// two or more of them built into a dashboard of cards (POST /dashboards).
import { byId, h } from './dom.js';
import { icon } from './icons.js';

/** @typedef {import('./types.ts').DashboardView} DashboardView */
/** @typedef {(method: string, path: string, body?: unknown) => Promise<unknown>} Api */

/**
 * Points the share form at a dashboard.
 * @param {string} id
 * @param {string} title
 */
export function shareTarget(id, title) {
  const form = byId('share', HTMLFormElement);
  form.dataset.dashboard = id;
  form.hidden = false;
  byId('share-target').textContent = title;
  byId('shared').textContent = '';
}

/** @param {DashboardView} d */
const kind = (d) => (d.cards > 0 ? `${d.cards} cards` : d.chart ? d.chart.type : 'table');

/**
 * @param {Api} api
 * @param {(err: unknown) => void} fail
 */
export function initDashboards(api, fail) {
  const chosen = () =>
    [...byId('my-dashboards').querySelectorAll('input[type=checkbox]:checked')].map((el) => /** @type {HTMLInputElement} */ (el).value);
  const update = () => {
    byId('build-submit', HTMLButtonElement).disabled = chosen().length < 2 || chosen().length > 12;
  };

  /**
   * @param {DashboardView} d
   * @param {boolean} mine
   */
  const row = (d, mine) =>
    h(
      'tr',
      {},
      h('td', {}, mine ? h('input', { type: 'checkbox', value: d.id, 'aria-label': `choose ${d.title}`, onchange: update }) : ''),
      h('td', {}, h('a', { href: d.url, target: '_blank', rel: 'noopener' }, d.title || d.id)),
      h('td', {}, kind(d)),
      h('td', {}, mine ? d.visibility : d.owner),
      h('td', {}, d.created_at.slice(0, 16).replace('T', ' ')),
      h(
        'td',
        {},
        mine
          ? h(
              'button',
              { type: 'button', class: 'icon-only', 'aria-label': `share ${d.title}`, onclick: () => shareTarget(d.id, d.title) },
              icon('share'),
            )
          : '',
      ),
    );

  async function refresh() {
    try {
      const [mine, shared] = /** @type {[{ dashboards: DashboardView[] }, { dashboards: DashboardView[] }]} */ (
        await Promise.all([api('GET', '/dashboards?scope=mine'), api('GET', '/dashboards?scope=shared')])
      );
      const rows = [...mine.dashboards.map((d) => row(d, true)), ...shared.dashboards.map((d) => row(d, false))];
      byId('my-dashboards').replaceChildren(
        rows.length
          ? h(
              'table',
              {},
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['', 'Title', 'Kind', 'Shared / owner', 'Created (UTC)', ''].map((t) => h('th', {}, t)),
                ),
              ),
              h('tbody', {}, rows),
            )
          : h('p', { class: 'muted' }, 'No dashboards yet: ask a question to publish one.'),
      );
      update();
    } catch (err) {
      fail(err);
    }
  }

  byId('build', HTMLFormElement).addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const built = /** @type {DashboardView} */ (
        await api('POST', '/dashboards', {
          title: byId('build-title', HTMLInputElement).value,
          cards: chosen().map((id) => ({ dashboard_id: id })),
        })
      );
      byId('built').replaceChildren('Built: ', h('a', { href: built.url, target: '_blank', rel: 'noopener' }, built.title));
      await refresh();
    } catch (err) {
      fail(err);
    }
  });
  return { refresh };
}
