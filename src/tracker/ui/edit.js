// @ts-check
// The pieces every edit in the UI is made of: a form that saves, and a button that acts (a delete, a removal). Each
// calls the API and then shows the view again, read afresh from the server; a refusal shows in the page's alert
// (guarded), and a form keeps what was typed.
import { h } from './dom.js';
import { guarded, refresh } from './router.js';

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
