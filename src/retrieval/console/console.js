// @ts-check
// The retrieval console: collections, upload by drop or browse, a question box, deletion. It calls the same HTTP API
// as every other client; pages are built with h() from dom.js, so names and text only ever go in as text.
import { byId, devIdentity, h } from './dom.js';
import { callJson } from './problem.js';

/** @typedef {import('./types.ts').Collection} Collection */
/** @typedef {import('./types.ts').CollectionList} CollectionList */
/** @typedef {import('./types.ts').DocumentList} DocumentList */
/** @typedef {import('./types.ts').QueryResponse} QueryResponse */

const input = (/** @type {string} */ id) => byId(id, HTMLInputElement);
/** @type {Collection | null} */
let current = null;
let slugEdited = false;

// The identity the ingress sets in production; typed in here under `svc dev`, whose page has the picker.
const headers = devIdentity(
  [
    ['who', 'X-User-Id', 'svc.user'],
    ['roles', 'X-User-Role', 'svc.roles'],
  ],
  () => void refresh(),
);

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
const api = (method, path, body) => callJson(method, path, body, headers());

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err));

/** @param {string} name */
const slugify = (name) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);

input('c-name').addEventListener('input', () => {
  if (!slugEdited) input('c-slug').value = slugify(input('c-name').value);
});
input('c-slug').addEventListener('input', () => {
  slugEdited = true;
});

const createForm = byId('create', HTMLFormElement);
createForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  byId('create-error').textContent = '';
  try {
    const roles = input('c-roles')
      .value.split(',')
      .map((r) => r.trim())
      .filter(Boolean);
    const created = /** @type {Collection} */ (
      await api('POST', '/collections', {
        slug: input('c-slug').value,
        name: input('c-name').value,
        description: input('c-desc').value,
        allowed_roles: roles,
      })
    );
    createForm.reset();
    slugEdited = false;
    await refresh(created.slug);
  } catch (err) {
    byId('create-error').textContent = message(err);
  }
});

/** @param {string} [select] the collection to open once the list is read */
async function refresh(select) {
  /** @type {Collection[]} */
  let list = [];
  try {
    list = /** @type {CollectionList} */ (await api('GET', '/collections')).collections;
  } catch (err) {
    byId('create-error').textContent = message(err);
  }
  byId('collections').replaceChildren(
    ...list.map((c) =>
      h(
        'li',
        {
          dataset: { slug: c.slug },
          class: current && c.slug === current.slug ? 'active' : null,
          onclick: () => open(c.slug),
        },
        h('span', {}, c.name),
        h('span', { class: 'muted' }, `${c.document_count} docs · ${c.chunk_count} chunks`),
      ),
    ),
  );
  if (select) await open(select);
  else if (current && !list.some((c) => c.slug === current?.slug)) {
    current = null;
    byId('detail').hidden = true;
  }
}

/** @param {string} slug */
async function open(slug) {
  const collection = /** @type {Collection} */ (await api('GET', `/collections/${slug}`));
  current = collection;
  for (const li of byId('collections').children) if (li instanceof HTMLElement) li.classList.toggle('active', li.dataset.slug === slug);
  byId('detail').hidden = false;
  byId('d-title').textContent = `${collection.name} (${collection.slug})`;
  byId('d-meta').textContent = `${collection.description || 'No description'} · roles: ${collection.allowed_roles.join(', ') || 'open'}`;
  byId('results').replaceChildren();
  const docs = /** @type {DocumentList} */ (await api('GET', `/collections/${slug}/documents`)).documents;
  byId('documents').replaceChildren(
    ...docs.map((d) => h('tr', {}, h('td', {}, d.filename), h('td', {}, d.status), h('td', {}, d.chunk_count))),
  );
}

/**
 * One file to the open collection, with its progress shown (fetch cannot report an upload's progress).
 * @param {Collection} collection
 * @param {File} file
 * @returns {Promise<{ filename: string, duplicate?: boolean }>}
 */
function upload(collection, file) {
  const progress = byId('progress', HTMLProgressElement);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/collections/${collection.slug}/documents`);
    for (const [k, v] of Object.entries(headers())) xhr.setRequestHeader(k, v);
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) progress.value = (100 * e.loaded) / e.total;
    });
    xhr.addEventListener('load', () => {
      const data = JSON.parse(xhr.responseText || '{}');
      if (xhr.status < 300) resolve(data);
      else reject(new Error(`${file.name}: ${data.detail || xhr.status}`));
    });
    xhr.addEventListener('error', () => reject(new Error(`${file.name}: network error`)));
    const form = new FormData();
    form.append('file', file);
    xhr.send(form);
  });
}

/** @param {File[]} files */
async function uploadAll(files) {
  if (!current) return;
  const collection = current;
  const progress = byId('progress', HTMLProgressElement);
  const uploadError = byId('upload-error');
  uploadError.textContent = '';
  progress.hidden = false;
  for (const file of files) {
    progress.value = 0;
    try {
      const doc = await upload(collection, file);
      if (doc.duplicate) uploadError.textContent += `${file.name}: already in this collection as ${doc.filename}; nothing was added.\n`;
    } catch (err) {
      uploadError.textContent += message(err) + '\n';
    }
  }
  progress.hidden = true;
  await refresh(collection.slug);
}

input('file').addEventListener('change', () => uploadAll([...(input('file').files ?? [])]));
const drop = byId('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  void uploadAll([...(e.dataTransfer?.files ?? [])]);
});

byId('ask', HTMLFormElement).addEventListener('submit', async (e) => {
  e.preventDefault();
  byId('ask-error').textContent = '';
  if (!current) return;
  try {
    const question = byId('question', HTMLTextAreaElement).value;
    const mode = byId('mode', HTMLSelectElement).value;
    const res = /** @type {QueryResponse} */ (
      await api('POST', `/collections/${current.slug}/query`, { question, top_k: Number(input('topk').value), mode })
    );
    // where each ranking placed the chunk, so a reader sees why hybrid put it there
    const ranks = (/** @type {QueryResponse['chunks'][number]} */ c) =>
      [c.dense_rank === null ? '' : `meaning #${c.dense_rank}`, c.keyword_rank === null ? '' : `keywords #${c.keyword_rank}`]
        .filter(Boolean)
        .join(', ');
    byId('results').replaceChildren(
      ...res.chunks.map((c) =>
        h(
          'div',
          { class: 'chunk' },
          h('div', { class: 'meta' }, `${c.filename} · page ${c.page} · score ${c.score.toFixed(3)}${ranks(c) ? ` · ${ranks(c)}` : ''}`),
          h('div', { class: 'text' }, c.text),
        ),
      ),
    );
    if (!res.chunks.length) byId('results').textContent = 'No chunks in this collection yet.';
  } catch (err) {
    byId('ask-error').textContent = message(err);
  }
});

byId('delete').addEventListener('click', async () => {
  if (!current || !confirm(`Delete collection "${current.name}" with all its documents and chunks?`)) return;
  try {
    await api('DELETE', `/collections/${current.slug}`);
    current = null;
    byId('detail').hidden = true;
    await refresh();
  } catch (err) {
    byId('ask-error').textContent = message(err);
  }
});

void refresh();
