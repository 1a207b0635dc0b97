// @ts-check
// A model version's aliases, set and removed through the calls MLflow's client makes (POST and DELETE
// registered-models/alias). An alias names one version: setting it on another moves it there. After a change the
// view is read again; a refusal shows in the page's alert.
import { api } from '../api.js';
import { h } from '../dom.js';
import { actionButton, saveForm } from '../edit.js';

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
      actionButton(`Remove @${a}`, `Remove @${a} from version ${version}`, () =>
        api('DELETE', 'registered-models/alias', { name, alias: a }),
      ),
    ),
    saveForm(
      { 'aria-label': `Set an alias on version ${version}` },
      () => api('POST', 'registered-models/alias', { name, alias: alias.value.trim(), version }),
      alias,
      h('button', { type: 'submit' }, 'Set alias'),
    ),
  ];
}
