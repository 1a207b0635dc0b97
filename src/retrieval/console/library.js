// @ts-check
// The documents table of the open collection: per row its format, status, chunks and upload date, and three actions,
// each an API call with the caller's identity: re-index (chunk and embed again from the stored text), download the
// extracted text, delete (after a confirmation). Buttons show icons with an aria-label naming the document.
import { h } from './dom.js';
import { icon } from './icons.js';

/** @typedef {import('./types.ts').DocumentView} DocumentView */

/**
 * @typedef {object} LibraryDeps
 * @property {string} slug the open collection
 * @property {(method: string, path: string, body?: unknown) => Promise<unknown>} api JSON calls with the identity
 * @property {() => Record<string, string>} headers the identity headers, for the text download
 * @property {() => Promise<void>} changed reads the collection again after a delete or re-index
 * @property {(message: string) => void} say where the outcome of an action is written
 */

/**
 * Fills the table body with one row per document.
 * @param {HTMLElement} tbody
 * @param {DocumentView[]} docs
 * @param {LibraryDeps} deps
 */
export function renderDocuments(tbody, docs, deps) {
  tbody.replaceChildren(
    ...docs.map((d) =>
      h(
        'tr',
        { dataset: { document: d.document_id } },
        h('td', {}, d.filename),
        h('td', {}, d.format),
        h('td', {}, d.status),
        h('td', {}, d.chunk_count),
        h('td', { title: d.created_at }, new Date(d.created_at).toLocaleDateString()),
        h(
          'td',
          { class: 'doc-actions' },
          action('refresh', `Re-index ${d.filename}`, 'reindex', () => reindex(d, deps)),
          action('download', `Download the text of ${d.filename}`, 'text', () => downloadText(d, deps)),
          action('trash', `Delete ${d.filename}`, 'delete', () => remove(d, deps)),
        ),
      ),
    ),
  );
}

/**
 * @param {import('./icons.js').IconName} name
 * @param {string} label
 * @param {string} what
 * @param {() => Promise<void>} run
 */
const action = (name, label, what, run) =>
  h(
    'button',
    { type: 'button', class: 'icon-button', 'aria-label': label, title: label, dataset: { action: what }, onclick: run },
    icon(name),
  );

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err));

/**
 * @param {DocumentView} d
 * @param {LibraryDeps} deps
 */
async function reindex(d, deps) {
  deps.say(`Re-indexing ${d.filename}…`);
  try {
    const done = /** @type {DocumentView} */ (await deps.api('POST', `/collections/${deps.slug}/documents/${d.document_id}/reindex`));
    deps.say(`${d.filename} re-indexed: ${done.chunk_count} chunks.`);
    await deps.changed();
  } catch (err) {
    deps.say(`${d.filename}: ${message(err)}`);
  }
}

/**
 * @param {DocumentView} d
 * @param {LibraryDeps} deps
 */
async function remove(d, deps) {
  if (!confirm(`Delete "${d.filename}" with its chunks from this collection?`)) return;
  try {
    await deps.api('DELETE', `/collections/${deps.slug}/documents/${d.document_id}`);
    deps.say(`${d.filename} deleted.`);
    await deps.changed();
  } catch (err) {
    deps.say(`${d.filename}: ${message(err)}`);
  }
}

/**
 * Fetched with the identity headers (a plain link could not send them), then saved under the name the service gives.
 * @param {DocumentView} d
 * @param {LibraryDeps} deps
 */
async function downloadText(d, deps) {
  try {
    const res = await fetch(`/collections/${deps.slug}/documents/${d.document_id}/text`, { headers: deps.headers() });
    if (!res.ok) throw new Error((await res.json().catch(() => ({}))).detail || `${res.status} ${res.statusText}`);
    const name = /filename\*=UTF-8''([^;]+)/.exec(res.headers.get('content-disposition') ?? '')?.[1];
    const link = h('a', { href: URL.createObjectURL(await res.blob()), download: name ? decodeURIComponent(name) : `${d.filename}.txt` });
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  } catch (err) {
    deps.say(`${d.filename}: ${message(err)}`);
  }
}
