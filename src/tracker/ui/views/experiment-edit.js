// @ts-check
// An experiment's edits, each through the REST call MLflow's client makes: its name (experiments/update), its
// description (the mlflow.note.content tag, set-experiment-tag, as MLflow's UI keeps it) and its deletion
// (experiments/delete, experiments/restore). After a save the view is read again from the server.
import { api } from '../api.js';
import { h } from '../dom.js';
import { actionButton, saveForm } from '../edit.js';
import { NOTE_TAG, noteEditor } from '../note.js';

/** @typedef {import('../types.ts').Experiment} Experiment */

/** @param {Experiment} experiment */
export function experimentRenameForm(experiment) {
  const name = h('input', { id: 'experiment-name', name: 'new_name', value: experiment.name, required: true });
  return saveForm(
    { id: 'rename-experiment', 'aria-label': 'Rename the experiment' },
    () => api('POST', 'experiments/update', { experiment_id: experiment.experiment_id, new_name: name.value.trim() }),
    h('label', { for: 'experiment-name' }, 'Name'),
    name,
    h('button', { type: 'submit' }, 'Rename'),
    h('span', { class: 'muted' }, 'Lifecycle: ', h('span', { id: 'experiment-lifecycle' }, experiment.lifecycle_stage)),
    experimentLifecycleButton(experiment),
  );
}

/**
 * Deletes the experiment (its runs go with it, and come back with it), or restores a deleted one.
 * @param {Experiment} experiment
 */
export function experimentLifecycleButton(experiment) {
  const experiment_id = experiment.experiment_id;
  return experiment.lifecycle_stage === 'deleted'
    ? actionButton('Restore', `Restore experiment ${experiment.name}`, () => api('POST', 'experiments/restore', { experiment_id }))
    : actionButton('Delete', `Delete experiment ${experiment.name}`, () => api('POST', 'experiments/delete', { experiment_id }));
}

/** @param {Experiment} experiment */
export const experimentDescription = (experiment) =>
  noteEditor({
    title: 'Description',
    text: (experiment.tags ?? []).find((t) => t.key === NOTE_TAG)?.value ?? '',
    empty: 'No description.',
    save: (value) => api('POST', 'experiments/set-experiment-tag', { experiment_id: experiment.experiment_id, key: NOTE_TAG, value }),
  });

/** What a list shows, as MLflow's view types name it; the link says which. */
export const VIEW_TYPES = /** @type {const} */ ([
  ['active', 'ACTIVE_ONLY', 'Active'],
  ['deleted', 'DELETED_ONLY', 'Deleted'],
  ['all', 'ALL', 'All'],
]);

/**
 * The view type a link names (active when it names none).
 * @param {string | null} view
 */
export const viewType = (view) => (VIEW_TYPES.find(([v]) => v === view) ?? VIEW_TYPES[0])[1];

/**
 * A select of the view types that shows another one when changed.
 * @param {string} id
 * @param {string | null} current the link's `view`
 * @param {(view: string) => void} show
 */
export function viewTypeSelect(id, current, show) {
  const select = h(
    'select',
    { id },
    VIEW_TYPES.map(([v, , label]) => h('option', { value: v, selected: v === (current || 'active') }, label)),
  );
  select.addEventListener('change', () => show(select.value));
  return [h('label', { for: id }, 'Show'), select];
}
