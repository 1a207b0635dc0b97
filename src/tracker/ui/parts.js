// @ts-check
// Pieces that several views build their pages from.
import { h } from './dom.js';

/** @typedef {import('./dom.js').Child} Child */
/** @typedef {import('./dom.js').Attrs} Attrs */
/** @typedef {import('./types.ts').KeyValue} KeyValue */

/**
 * @param {string} href
 * @param {...Child} children
 */
export const link = (href, ...children) => h('a', { href }, ...children);

/**
 * @param {string | null} title
 * @param {...Child} children
 */
export const section = (title, ...children) => h('section', {}, title ? h('h2', {}, title) : null, ...children);

/**
 * A table whose header cells are given as nodes or as text (a column heading each).
 * @param {(string | Node | (string | Node)[])[]} head
 * @param {Child} rows
 * @param {Attrs} [attrs]
 */
export function table(head, rows, attrs = {}) {
  return h(
    'table',
    attrs,
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.flat().map((c) => (c instanceof Node ? c : h('th', { scope: 'col' }, c))),
      ),
    ),
    h('tbody', {}, rows),
  );
}

/**
 * @param {KeyValue[]} items
 * @param {string} id
 * @param {string} empty what to say when there are none
 */
export function keyValueTable(items, id, empty) {
  if (!items.length) return h('p', { class: 'muted' }, empty);
  return table(
    ['Name', 'Value'],
    items.map((i) => h('tr', {}, h('th', { scope: 'row' }, i.key), h('td', {}, i.value))),
    { id, class: 'wide' },
  );
}
