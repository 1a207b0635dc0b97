// @ts-check
// A run's edits, each through the REST call MLflow's client makes: its name (runs/update), its tags (runs/set-tag,
// runs/delete-tag), its note (the mlflow.note.content tag) and its deletion (runs/delete, runs/restore). After a save
// the view is read again from the server; a refusal shows in the page's alert (guarded) and the form keeps what was
// typed.
import { api } from '../api.js';
import { h } from '../dom.js';
import { actionButton, saveForm, tagEditor } from '../edit.js';
import { runName } from '../format.js';
import { NOTE_TAG, noteEditor } from '../note.js';

/** @typedef {import('../types.ts').Run} Run */
/** @typedef {import('../types.ts').KeyValue} KeyValue */

/** @param {Run} run */
export function renameForm(run) {
  const name = h('input', { id: 'run-name', name: 'run_name', value: run.info.run_name ?? '', required: true });
  return saveForm(
    { id: 'rename-run', 'aria-label': 'Rename the run' },
    () => api('POST', 'runs/update', { run_id: run.info.run_id, run_name: name.value.trim() }),
    h('label', { for: 'run-name' }, 'Name'),
    name,
    h('button', { type: 'submit' }, 'Rename'),
  );
}

/**
 * The run's own tags (runs/set-tag, runs/delete-tag).
 * @param {Run} run
 * @param {KeyValue[]} tags
 */
export function runTags(run, tags) {
  const run_id = run.info.run_id;
  return tagEditor(
    tags,
    (key, value) => api('POST', 'runs/set-tag', { run_id, key, value }),
    (key) => api('POST', 'runs/delete-tag', { run_id, key }),
  );
}

/**
 * The run's note (its mlflow.note.content tag, which MLflow's UI writes too), as Markdown shown safely.
 * @param {Run} run
 */
export const runNote = (run) =>
  noteEditor({
    title: 'Note',
    text: (run.data?.tags ?? []).find((t) => t.key === NOTE_TAG)?.value ?? '',
    empty: 'No note.',
    save: (value) => api('POST', 'runs/set-tag', { run_id: run.info.run_id, key: NOTE_TAG, value }),
  });

/**
 * Deletes the run (runs/delete: it moves to the deleted ones, from which runs/restore brings it back), or restores
 * a deleted one.
 * @param {Run} run
 */
export function lifecycleButton(run) {
  const run_id = run.info.run_id;
  return run.info.lifecycle_stage === 'deleted'
    ? actionButton('Restore run', `Restore run ${runName(run)}`, () => api('POST', 'runs/restore', { run_id }))
    : actionButton('Delete run', `Delete run ${runName(run)}`, () => api('POST', 'runs/delete', { run_id }));
}
