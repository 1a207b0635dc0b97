// @ts-check
// The pieces every edit in the UI is made of: a form that saves, and a button that acts (a delete, a removal), and
// the tag table both make. Each calls the API and then shows the view again, read afresh from the server; a refusal
// shows in the page's alert (guarded), and a form keeps what was typed.
import { h } from './dom.js';
import { section, table } from './parts.js';
import { guarded, refresh } from './router.js';

/** @typedef {import('./types.ts').KeyValue} KeyValue */

/**
 * A form whose submit (a button, or Enter in a single-line input) saves and then shows the view again.
 * @param {Record<string, string>} attrs
 * @param {() => Promise<unknown>} save
 * @param {...import('./dom.js').Child} children
 */
export const saveForm = (attrs, save, ...children) =>
  h(
    'form',
    {
      class: 'toolbar',
      ...attrs,
      onsubmit: guarded(async (e) => {
        e.preventDefault();
        await save();
        await refresh();
      }),
    },
    ...children,
  );

/**
 * A button that acts and then shows the view again.
 * @param {string} text
 * @param {string} label what it does, for assistive technology
 * @param {() => Promise<unknown>} act
 */
export const actionButton = (text, label, act) =>
  h(
    'button',
    {
      type: 'button',
      class: 'link',
      'aria-label': label,
      onclick: guarded(async () => {
        await act();
        await refresh();
      }),
    },
    text,
  );

/**
 * Tags, each with a button that deletes it, and a form that adds (or overwrites) one; a page has one such table.
 * @param {KeyValue[]} tags
 * @param {(key: string, value: string) => Promise<unknown>} set
 * @param {(key: string) => Promise<unknown>} remove
 */
export function tagEditor(tags, set, remove) {
  const rows = [...tags]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((t) =>
      h(
        'tr',
        { dataset: { tag: t.key } },
        h('th', { scope: 'row' }, t.key),
        h('td', {}, t.value),
        h(
          'td',
          {},
          actionButton('Delete', `Delete tag ${t.key}`, () => remove(t.key)),
        ),
      ),
    );
  const key = h('input', { id: 'tag-key', name: 'key', required: true, placeholder: 'key' });
  const value = h('input', { id: 'tag-value', name: 'value', placeholder: 'value' });
  return section(
    'Tags',
    rows.length ? table(['Name', 'Value', ''], rows, { id: 'tags', class: 'wide' }) : h('p', { class: 'muted' }, 'No tags.'),
    saveForm(
      { id: 'add-tag', 'aria-label': 'Add a tag' },
      () => set(key.value.trim(), value.value),
      h('label', { for: 'tag-key' }, 'Tag'),
      key,
      h('label', { for: 'tag-value' }, 'Value'),
      value,
      h('button', { type: 'submit' }, 'Add tag'),
    ),
  );
}
