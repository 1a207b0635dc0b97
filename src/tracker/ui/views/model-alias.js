// @ts-check
// A model version's aliases, set and removed through the calls MLflow's client makes (POST and DELETE
// registered-models/alias). An alias names one version: setting it on another moves it there. After a change the
// view is read again; a refusal shows in the page's alert.
import { api } from '../api.js';
import { h } from '../dom.js';
import { guarded, refresh } from '../router.js';

/**
 * What the version's "Edit aliases" cell holds: a button per alias that removes it, and a form that sets one.
 * @param {string} name the registered model
 * @param {string} version
 * @param {string[]} aliases the version's aliases now
 */
export function aliasEditor(name, version, aliases) {
  const alias = h('input', { name: 'alias', required: true, placeholder: 'alias', size: 10, 'aria-label': `Alias for version ${version}` });
  return [
    aliases.map((a) =>
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          'aria-label': `Remove alias ${a} from version ${version}`,
          onclick: guarded(async () => {
            await api('DELETE', 'registered-models/alias', { name, alias: a });
            await refresh();
          }),
        },
        `Remove @${a}`,
      ),
    ),
    h(
      'form',
      {
        class: 'toolbar',
        'aria-label': `Set an alias on version ${version}`,
        onsubmit: guarded(async (e) => {
          e.preventDefault();
          await api('POST', 'registered-models/alias', { name, alias: alias.value.trim(), version });
          await refresh();
        }),
      },
      alias,
      h('button', { type: 'submit' }, 'Set alias'),
    ),
  ];
}
