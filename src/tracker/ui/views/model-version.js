// @ts-check
// One model version: its facts, aliases (model-alias.js), description and tags, each edited through the call MLflow's
// client makes (model-versions/update, model-versions/set-tag and delete-tag). Tags the client set show here too.
import { api } from '../api.js';
import { h } from '../dom.js';
import { tagEditor } from '../edit.js';
import { formatTime, runName } from '../format.js';
import { noteEditor } from '../note.js';
import { link, section } from '../parts.js';
import { aliasEditor } from './model-alias.js';

/** @typedef {import('../dom.js').Child} Child */

/**
 * The version page's link.
 * @param {string} name
 * @param {string} version
 */
export const versionHref = (name, version) => `#/models/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`;

/**
 * @param {string} name
 * @param {string} version
 */
export async function modelVersionView(name, version) {
  const { model_version: v } = await api('GET', 'model-versions/get', { name, version });
  const run = v.run_id
    ? await api('GET', 'runs/get', { run_id: v.run_id }).then(
        (r) => r.run,
        () => null,
      )
    : null;
  /** @type {[string, Child][]} */
  const facts = [
    ['Stage', v.current_stage],
    [
      'Aliases',
      h(
        'span',
        { id: 'version-aliases' },
        (v.aliases ?? []).map((a) => h('span', { class: 'badge alias' }, `@${a}`)),
      ),
    ],
    ['Source run', v.run_id ? link(`#/runs/${encodeURIComponent(v.run_id)}`, run ? runName(run) : v.run_id) : ''],
    ['Source', h('span', { class: 'mono' }, v.source)],
    ['Status', v.status],
    ['Registered', formatTime(v.creation_timestamp)],
    ['Last modified', formatTime(v.last_updated_timestamp)],
  ];
  return h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      link('#/models', 'Models'),
      ' / ',
      link(`#/models/${encodeURIComponent(name)}`, name),
      ' / ',
      `Version ${version}`,
    ),
    section(
      `Model ${name} version ${version}`,
      h(
        'dl',
        { class: 'facts' },
        facts.map(([k, value]) => [h('dt', {}, k), h('dd', {}, value)]),
      ),
      h('div', { class: 'toolbar' }, aliasEditor(name, version, v.aliases ?? [])),
    ),
    await noteEditor({
      title: 'Description',
      text: v.description ?? '',
      empty: 'No description.',
      save: (description) => api('PATCH', 'model-versions/update', { name, version, description }),
    }),
    tagEditor(
      v.tags ?? [],
      (key, value) => api('POST', 'model-versions/set-tag', { name, version, key, value }),
      (key) => api('DELETE', 'model-versions/delete-tag', { name, version, key }),
    ),
  );
}
