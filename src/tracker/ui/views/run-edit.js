// @ts-check
// A run's edits, each through the REST call MLflow's client makes: its name (runs/update), its tags (runs/set-tag,
// runs/delete-tag) and its note (the mlflow.note.content tag). After a save the view is read again from the server;
// a refusal shows in the page's alert (guarded) and the form keeps what was typed.
import { api } from '../api.js';
import { h } from '../dom.js';
import { actionButton, saveForm } from '../edit.js';
import { section, table } from '../parts.js';

/** @typedef {import('../types.ts').Run} Run */
/** @typedef {import('../types.ts').KeyValue} KeyValue */

/** The tag MLflow's UI keeps a run's note in. */
export const NOTE_TAG = 'mlflow.note.content';

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
 * The user's tags, each with a button that deletes it, and a form that adds (or overwrites) one.
 * @param {Run} run
 * @param {KeyValue[]} tags
 */
export function tagEditor(run, tags) {
  const runId = run.info.run_id;
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
          actionButton('Delete', `Delete tag ${t.key}`, () => api('POST', 'runs/delete-tag', { run_id: runId, key: t.key })),
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
      () => api('POST', 'runs/set-tag', { run_id: runId, key: key.value.trim(), value: value.value }),
      h('label', { for: 'tag-key' }, 'Tag'),
      key,
      h('label', { for: 'tag-value' }, 'Value'),
      value,
      h('button', { type: 'submit' }, 'Add tag'),
    ),
  );
}

/**
 * The run's note as plain text (line breaks kept by CSS; Markdown is not rendered), and a textarea that saves it;
 * Ctrl+Enter (or Cmd+Enter) saves as the button does.
 * @param {Run} run
 */
export function noteEditor(run) {
  const note = (run.data?.tags ?? []).find((t) => t.key === NOTE_TAG)?.value ?? '';
  const text = h('textarea', { id: 'note-text', name: 'note', rows: 5, 'aria-label': 'Note' });
  text.value = note;
  const form = saveForm(
    { id: 'edit-note', class: 'note-form', 'aria-label': 'Edit the note' },
    () => api('POST', 'runs/set-tag', { run_id: run.info.run_id, key: NOTE_TAG, value: text.value }),
    text,
    h('button', { type: 'submit' }, 'Save note'),
  );
  text.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  return section('Note', note ? h('div', { id: 'note', class: 'note' }, note) : h('p', { class: 'muted', id: 'note' }, 'No note.'), form);
}
