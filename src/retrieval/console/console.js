// @ts-check
// The retrieval console: collections, upload by drop or browse, a question box (chunks, or a streamed answer in the
// current conversation whose citations open the cited page), deletion. Modules of their own: the conversations
// (sessions.js), the cited page (page-view.js), the documents table (library.js), the filter (filters.js) and the
// uploads' progress (upload.js). It calls the same HTTP API as every other client; pages are built with h() from
// dom.js, so names and text only ever go in as text.
import { byId, h } from './dom.js';
import { createFilters } from './filters.js';
import { icon } from './icons.js';
import { ctrlEnterSubmits } from './keys.js';
import { renderDocuments } from './library.js';
import { createPageView } from './page-view.js';
import { callJson } from './problem.js';
import { createConversations } from './sessions.js';
import { signIn } from './sign-in.js';
import { traceLink } from './trace-link.js';
import { uploadAll as sendFiles } from './upload.js';

/** @typedef {import('./types.ts').Collection} Collection */
/** @typedef {import('./types.ts').CollectionList} CollectionList */
/** @typedef {import('./types.ts').DocumentList} DocumentList */
/** @typedef {import('./types.ts').QueryResponse} QueryResponse */
/** @typedef {import('./types.ts').AnswerResponse} AnswerResponse */
/** @typedef {import('./types.ts').AnswerDone} AnswerDone */
/** @typedef {import('./types.ts').Citation} Citation */

const input = (/** @type {string} */ id) => byId(id, HTMLInputElement);
/** @type {Collection | null} */
let current = null;
let slugEdited = false;

// Who calls: the sign-in box under `svc dev`, the ingress elsewhere; nothing is asked before someone is signed in.
ctrlEnterSubmits();
const { headers } = signIn(() => {
  void refresh();
  void conversations.refresh();
});

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
const api = (method, path, body) => callJson(method, path, body, headers());

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err));
const showError = (/** @type {unknown} */ err) => {
  byId('ask-error').textContent = message(err);
};
const pages = createPageView({ api, headers, onError: showError });
const conversations = createConversations({
  api,
  openCollection: (slug) => open(slug),
  withMarkers: pages.withMarkers,
  onError: showError,
});

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
  byId('create-error').textContent = ''; // a refusal of an earlier read is not this one's
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
          onclick: () => {
            conversations.start();
            void open(c.slug);
          },
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
  byId('answer').hidden = true;
  byId('page-view').hidden = true;
  await showDocuments(slug);
}

// The filter of search and answer (filters.js), and the documents table with its per-document actions (library.js).
const filters = createFilters(byId('filters'));

/** @param {string} slug */
async function showDocuments(slug) {
  const docs = /** @type {DocumentList} */ (await api('GET', `/collections/${slug}/documents`)).documents;
  filters.setDocuments(docs);
  renderDocuments(byId('documents'), docs, {
    slug,
    api,
    headers,
    say: (text) => {
      byId('doc-said').textContent = text;
    },
    changed: () => refresh(slug),
  });
}

/** @param {File[]} files */
async function uploadAll(files) {
  if (!current) return;
  const slug = current.slug;
  await sendFiles(files, { slug, headers, uploaded: () => refresh(slug) });
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
    byId('answer').hidden = true;
    byId('page-view').hidden = true;
    const res = /** @type {QueryResponse} */ (
      await api('POST', `/collections/${current.slug}/query`, {
        question,
        top_k: Number(input('topk').value),
        mode,
        filter: filters.value(),
      })
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
    if (!res.chunks.length)
      byId('results').textContent = filters.value() ? 'No chunks in the documents the filter keeps.' : 'No chunks in this collection yet.';
  } catch (err) {
    byId('ask-error').textContent = message(err);
  }
});

/** The audit id of the answer shown, which thumbs up or down rate. @type {number | null} */
let answered = null;
for (const [id, rating] of /** @type {const} */ ([
  ['fb-up', 'up'],
  ['fb-down', 'down'],
])) {
  byId(id).replaceChildren(icon(rating === 'up' ? 'thumbs-up' : 'thumbs-down'));
  byId(id).addEventListener('click', async () => {
    if (answered === null) return;
    try {
      await api('POST', `/audit/queries/${answered}/feedback`, { rating });
      byId('fb-said').textContent = `Thanks: recorded as ${rating === 'up' ? 'useful' : 'not useful'}.`;
    } catch (err) {
      byId('fb-said').textContent = message(err);
    }
  });
}

// An answer streams in as Server-Sent Events (fetch, since EventSource cannot POST); once its citations are known
// each [n] becomes a button that opens the cited page with the quote marked.
byId('answer-btn').addEventListener('click', async () => {
  byId('ask-error').textContent = '';
  if (!current) return;
  const question = byId('question', HTMLTextAreaElement).value.trim();
  if (!question) return;
  const slug = current.slug;
  const session = conversations.sessionId();
  const text = byId('answer-text');
  byId('answer').hidden = false;
  byId('page-view').hidden = true;
  byId('results').replaceChildren();
  text.replaceChildren();
  byId('answer-meta').textContent = 'Answering…';
  byId('answer-sources').replaceChildren();
  byId('answer-feedback').hidden = true;
  answered = null;
  await conversations.beforeAnswer();
  try {
    const res = await fetch(`/collections/${slug}/answer`, {
      method: 'POST',
      headers: { ...headers(), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ question, top_k: Number(input('topk').value), stream: true, filter: filters.value(), session_id: session }),
    });
    if (!res.ok || !res.body) {
      const problem = await res.json().catch(() => ({}));
      throw new Error(problem.detail || `${res.status} ${res.statusText}`);
    }
    let answer = '';
    /** @type {Citation[]} */
    let citations = [];
    for await (const { event, data } of events(res.body)) {
      if (event === 'delta') {
        answer += data.text;
        text.append(data.text);
      } else if (event === 'citations') citations = data.citations;
      else if (event === 'error') throw new Error(data.detail || 'the answer failed');
      else if (event === 'done') {
        const done = /** @type {AnswerDone} */ (data);
        text.replaceChildren(...pages.withMarkers(answer, citations, slug));
        byId('answer-meta').textContent = [
          done.grounded ? `answered by ${done.model}` : 'nothing in this collection on the question',
          done.standalone_question ? `read as: ${done.standalone_question}` : '',
          `${Math.round(done.latency_ms)} ms`,
        ]
          .filter(Boolean)
          .join(' · ');
        // with tracing on, the answer's trace in the tracker's UI, found by the request id it was answered with
        const trace = traceLink(res.headers.get('X-Request-Id'));
        if (trace) byId('answer-meta').append(' · ', trace);
        byId('answer-sources').replaceChildren(
          ...citations.map((c) => h('li', { value: c.marker }, `${c.filename} · page ${c.page}: “${c.quote}”`)),
        );
        answered = done.audit_id;
        void conversations.refresh();
        byId('fb-said').textContent = '';
        byId('answer-feedback').hidden = false;
      }
    }
  } catch (err) {
    byId('answer-meta').textContent = '';
    byId('ask-error').textContent = message(err);
  }
});

/**
 * The events of a text/event-stream body, each with its JSON data.
 * @param {ReadableStream<any>} body the response body (bytes)
 * @returns {AsyncGenerator<{ event: string, data: any }>}
 */
async function* events(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      yield { event, data: JSON.parse(data) };
    }
  }
}

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
