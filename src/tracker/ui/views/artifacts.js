// @ts-check
// A run's artifacts as a tree that opens folder by folder, each file downloadable and previewable (artifact-preview.js).
import { allPages, artifactHref } from '../api.js';
import { append, h } from '../dom.js';
import { formatBytes, num } from '../format.js';
import { section } from '../parts.js';
import { guarded } from '../router.js';
import { previewLimit, showPreview } from './artifact-preview.js';

/** @typedef {import('../types.ts').Run} Run */
/** @typedef {import('../types.ts').FileInfo} FileInfo */

/** @param {Run} run */
export async function artifactBrowser(run) {
  const preview = h('div', { id: 'artifact-preview' });
  const root = await artifactList(run, '', preview);
  root.classList.add('root');
  root.id = 'artifacts';
  return section('Artifacts', root, preview);
}

/**
 * @param {Run} run
 * @param {string} path a folder of the run's artifacts ('' for the root)
 * @param {HTMLElement} preview where a previewed file shows
 */
async function artifactList(run, path, preview) {
  const files = await allPages('artifacts/list', { run_id: run.info.run_id, path: path || undefined }, (page) => page.files);
  files.sort((a, b) => Number(b.is_dir) - Number(a.is_dir) || a.path.localeCompare(b.path));
  const ul = h('ul', { class: 'tree' });
  if (!files.length && !path) ul.append(h('li', { class: 'muted' }, 'No artifacts.'));
  for (const file of files) ul.append(file.is_dir ? folderItem(run, file, preview) : fileItem(run, file, preview));
  return ul;
}

/**
 * @param {Run} run
 * @param {FileInfo} file
 * @param {HTMLElement} preview
 */
function folderItem(run, file, preview) {
  const name = file.path.split('/').pop();
  const li = h('li', { dataset: { path: file.path } });
  /** @type {HTMLElement | null} */
  let children = null;
  const toggle = h('button', { type: 'button', class: 'link', 'aria-expanded': 'false', 'aria-label': `Folder ${file.path}` }, `${name}/`);
  toggle.addEventListener(
    'click',
    guarded(async () => {
      const open = toggle.getAttribute('aria-expanded') === 'true';
      if (open && children) {
        toggle.setAttribute('aria-expanded', 'false');
        children.hidden = true;
        return;
      }
      if (!children) {
        children = await artifactList(run, file.path, preview);
        li.append(children);
      }
      children.hidden = false;
      toggle.setAttribute('aria-expanded', 'true');
    }),
  );
  return append(li, [toggle]);
}

/**
 * @param {Run} run
 * @param {FileInfo} file
 * @param {HTMLElement} preview
 */
function fileItem(run, file, preview) {
  const name = file.path.split('/').pop();
  const href = artifactHref(run, file.path);
  const size = file.file_size === undefined ? null : num(file.file_size);
  const show = h(
    'button',
    {
      type: 'button',
      class: 'link',
      'aria-label': `Preview ${file.path}`,
      onclick: guarded(() => showPreview(href, file.path, preview)),
    },
    'Preview',
  );
  if (size !== null && size > previewLimit(file.path)) show.disabled = true;
  return h(
    'li',
    { dataset: { path: file.path } },
    h('span', { class: 'file' }, name),
    h('span', { class: 'muted size' }, formatBytes(size)),
    h('span', { class: 'actions' }, h('a', { href, download: name, 'aria-label': `Download ${file.path}` }, 'Download'), show),
  );
}
