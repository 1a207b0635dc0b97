// @ts-check
// A note or a description (a run's or experiment's mlflow.note.content tag, a model's or version's description): its
// Markdown shown safely (markdown.js) and a textarea that saves it through the caller's REST call; Ctrl+Enter (or
// Cmd+Enter) saves as the button does (keys.js, started in app.js). A page has one, so its parts have fixed ids.
import { h } from './dom.js';
import { saveForm } from './edit.js';
import { markdown } from './markdown.js';
import { section } from './parts.js';

/** The tag MLflow keeps a run's note and an experiment's description in. */
export const NOTE_TAG = 'mlflow.note.content';

/**
 * @param {{ title: string, text: string, empty: string, save: (text: string) => Promise<unknown> }} note
 */
export async function noteEditor({ title, text, empty, save }) {
  const input = h('textarea', { id: 'note-text', name: 'note', rows: 5, 'aria-label': title });
  input.value = text;
  const edit = saveForm(
    { id: 'edit-note', class: 'toolbar note-form', 'aria-label': `Edit the ${title.toLowerCase()}` },
    () => save(input.value),
    input,
    h('button', { type: 'submit' }, `Save ${title.toLowerCase()}`),
  );
  const shown = text ? await markdown(text, { id: 'note', class: 'note markdown' }) : h('p', { class: 'muted', id: 'note' }, empty);
  return section(title, shown, edit);
}
