// @ts-check
// Every view is a hash route, so pages are linkable; a later navigation wins over a slower earlier one.
import { byId, h } from './dom.js';
import { link } from './parts.js';

/** @typedef {(match: RegExpExecArray, query: URLSearchParams) => Node | Promise<Node>} View */
/** @typedef {[RegExp, View]} Route */

const $view = byId('view');
const $error = byId('error');
let navigation = 0;
/** @type {Route[]} */
let known = [];

export function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/experiments';
  const [path = '', query = ''] = raw.split('?');
  return { path, query: new URLSearchParams(query) };
}

/**
 * A link to a view; empty query values are left out.
 * @param {string} path
 * @param {Record<string, string | null | undefined>} [query]
 */
export function hashFor(path, query = {}) {
  /** @type {[string, string][]} */
  const present = [];
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') present.push([k, v]);
  const qs = new URLSearchParams(present).toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}

/** @param {unknown} err */
export function showError(err) {
  $error.textContent = err instanceof Error ? err.message : String(err);
  $error.hidden = false;
}

/**
 * Runs an action from a button or form; its failure shows in the page's alert instead of vanishing.
 * @template {unknown[]} A
 * @param {(...args: A) => unknown} fn
 * @returns {(...args: A) => Promise<void>}
 */
export const guarded =
  (fn) =>
  async (...args) => {
    try {
      await fn(...args);
    } catch (err) {
      showError(err);
    }
  };

/** @param {Route[]} routes */
async function render(routes) {
  const token = ++navigation;
  const { path, query } = parseHash();
  $error.hidden = true;
  $view.setAttribute('aria-busy', 'true');
  for (const [id, prefix] of /** @type {const} */ ([
    ['nav-experiments', '/experiments'],
    ['nav-models', '/models'],
  ])) {
    const here = path === prefix || path.startsWith(`${prefix}/`) || (prefix === '/experiments' && (path === '/' || path === ''));
    byId(id).toggleAttribute('aria-current', false);
    if (here) byId(id).setAttribute('aria-current', 'page');
  }
  try {
    let node = null;
    for (const [re, view] of routes) {
      const match = re.exec(path);
      if (match) {
        node = await view(match, query);
        break;
      }
    }
    node ??= h('p', {}, `No page at ${path}. `, link('#/experiments', 'Experiments'));
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

/**
 * Shows the view the hash names, now and at every change of the hash.
 * @param {Route[]} routes
 */
export function startRouter(routes) {
  known = routes;
  window.addEventListener('hashchange', () => void render(routes));
  void render(routes);
}

/** Shows the current view again, read afresh from the API: after an edit the page shows what the server now holds. */
export const refresh = () => render(known);
