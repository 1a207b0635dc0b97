// @ts-check
// The caller's history (GET /history) and saved questions (GET/POST/DELETE /saved) beside the editor: clicking one
// loads its SQL (and its question, when it has one) for the user to run again.
import { byId, h } from './dom.js';
import { icon } from './icons.js';

/** @typedef {import('./types.ts').HistoryPage} HistoryPage */
/** @typedef {import('./types.ts').SavedList} SavedList */
/** @typedef {{ sql: string, question: string | null }} Loadable */

const HISTORY_SIZE = 20;

/** A line of SQL short enough for a list. @param {string} text */
const firstLine = (text) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 90 ? `${line.slice(0, 87)}...` : line;
};

/**
 * @param {{
 *   api: (method: string, path: string, body?: unknown) => Promise<unknown>,
 *   onLoad: (item: Loadable) => void,
 *   onError: (err: unknown) => void,
 * }} deps
 */
export function createLibrary({ api, onLoad, onError }) {
  /** @param {Loadable} item @param {string} label @param {string} meta */
  const entry = (item, label, meta) =>
    h(
      'button',
      { type: 'button', class: 'library-item', onclick: () => onLoad(item) },
      h('span', {}, label),
      h('span', { class: 'muted' }, meta),
    );

  async function refreshHistory() {
    const page = /** @type {HistoryPage} */ (await api('GET', `/history?limit=${HISTORY_SIZE}`));
    const items = page.history.map((i) => {
      const label = i.question ?? firstLine(i.sql ?? '');
      const meta = i.outcome === 'answered' || i.outcome === 'cached' ? `${i.row_count ?? 0} rows` : `${i.outcome} (${i.status})`;
      // a question refused before any SQL was written has nothing to load
      return h(
        'li',
        {},
        i.sql ? entry({ sql: i.sql, question: i.question }, label, meta) : h('span', { class: 'muted' }, `${label} · ${meta}`),
      );
    });
    byId('history').replaceChildren(...(items.length ? items : [h('li', { class: 'muted' }, 'Nothing asked yet.')]));
  }

  async function refreshSaved() {
    const list = /** @type {SavedList} */ (await api('GET', '/saved'));
    const items = list.saved.map((s) =>
      h(
        'li',
        {},
        entry({ sql: s.sql, question: s.question }, s.title, firstLine(s.sql)),
        h(
          'button',
          { type: 'button', class: 'icon-only', 'aria-label': `Delete saved question ${s.title}`, onclick: () => void remove(s.id) },
          icon('trash'),
        ),
      ),
    );
    byId('saved').replaceChildren(...(items.length ? items : [h('li', { class: 'muted' }, 'No saved questions.')]));
  }

  /** @param {string} id */
  async function remove(id) {
    try {
      await api('DELETE', `/saved/${encodeURIComponent(id)}`);
      await refreshSaved();
    } catch (err) {
      onError(err);
    }
  }

  return {
    /** Both lists, after sign-in and after each run. */
    async refresh() {
      try {
        await Promise.all([refreshHistory(), refreshSaved()]);
      } catch (err) {
        onError(err);
      }
    },
    refreshHistory: () => refreshHistory().catch(onError),
    /** @param {{ title: string, sql: string, question?: string }} item */
    async save(item) {
      await api('POST', '/saved', item);
      await refreshSaved();
    },
  };
}
