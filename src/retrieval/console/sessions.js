// @ts-check
// The reader's conversations: the caller's answer sessions (GET /sessions), newest first. Every answer is asked in
// the current conversation (its session_id), a new one until one is picked from the list; picking one opens its
// collection and shows its turns, so the next question is a follow-up. Each can be renamed in place (Enter saves,
// Escape leaves it) or deleted after a confirmation.
import { byId, h } from './dom.js';
import { icon } from './icons.js';
import { ProblemError } from './problem.js';

/** @typedef {import('./types.ts').SessionList} SessionList */
/** @typedef {import('./types.ts').SessionSummary} SessionSummary */
/** @typedef {import('./types.ts').SessionDetail} SessionDetail */
/** @typedef {import('./types.ts').Citation} Citation */

/** A fresh session id; randomUUID exists only in secure contexts (https, localhost). */
function newSessionId() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * @param {{
 *   api: (method: string, path: string, body?: unknown) => Promise<unknown>,
 *   openCollection: (slug: string) => Promise<void>,
 *   withMarkers: (answer: string, citations: Citation[], slug: string) => (string | HTMLElement)[],
 *   onError: (err: unknown) => void,
 * }} ctx
 */
export function createConversations(ctx) {
  /** The conversation answers go to; `listed` once the service has one of its turns. */
  let current = { id: newSessionId(), listed: false };

  const list = byId('conv-list');
  const thread = byId('thread');

  function showCurrent() {
    for (const li of list.children) if (li instanceof HTMLElement) li.classList.toggle('active', li.dataset.session === current.id);
    byId('conv-new').setAttribute('aria-pressed', String(!current.listed));
  }

  /** Reads the list again (after an answer, a rename, a delete). */
  async function refresh() {
    try {
      const { sessions } = /** @type {SessionList} */ (await ctx.api('GET', '/sessions'));
      list.replaceChildren(...sessions.map(item));
      if (sessions.some((s) => s.id === current.id)) current.listed = true;
      showCurrent();
    } catch (err) {
      // before anyone has signed in there is nothing to list, and nothing to complain about
      const signedOut = err instanceof ProblemError && err.body.status === 401;
      list.replaceChildren(...(signedOut ? [] : [h('li', { class: 'muted' }, err instanceof Error ? err.message : String(err))]));
    }
  }

  /** @param {SessionSummary} s */
  function item(s) {
    const title = h('button', { type: 'button', class: 'conv-title', title: `${s.collection} · ${s.turns} turns` }, s.title);
    title.addEventListener('click', () => void select(s.id));
    const rename = h('button', { type: 'button', class: 'icon-button', 'aria-label': `Rename “${s.title}”` }, icon('edit'));
    rename.addEventListener('click', () => startRename(li, s));
    const remove = h('button', { type: 'button', class: 'icon-button', 'aria-label': `Delete “${s.title}”` }, icon('trash'));
    remove.addEventListener('click', () => void removeSession(s));
    const li = h('li', { dataset: { session: s.id } }, title, h('span', { class: 'conv-actions' }, rename, remove));
    return li;
  }

  /**
   * The title becomes a box: Enter saves it, Escape (or leaving it) puts the title back.
   * @param {HTMLElement} li
   * @param {SessionSummary} s
   */
  function startRename(li, s) {
    const box = h('input', { type: 'text', class: 'conv-rename', value: s.title, 'aria-label': 'New name of the conversation' });
    let done = false;
    const finish = async (/** @type {boolean} */ save) => {
      if (done) return;
      done = true;
      const title = box.value.trim();
      if (save && title && title !== s.title) {
        try {
          await ctx.api('PATCH', `/sessions/${encodeURIComponent(s.id)}`, { title });
        } catch (err) {
          ctx.onError(err);
        }
      }
      await refresh();
    };
    box.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') void finish(true);
      else if (e.key === 'Escape') void finish(false);
    });
    box.addEventListener('blur', () => void finish(false));
    li.replaceChildren(box);
    box.focus();
    box.select();
  }

  /** @param {SessionSummary} s */
  async function removeSession(s) {
    if (!confirm(`Delete the conversation “${s.title}” and its ${s.turns} turns?`)) return;
    try {
      await ctx.api('DELETE', `/sessions/${encodeURIComponent(s.id)}`);
      if (s.id === current.id) start();
    } catch (err) {
      ctx.onError(err);
    }
    await refresh();
  }

  /** Picks a conversation: its collection opens and its turns show; the next answer continues it. */
  async function select(/** @type {string} */ id) {
    try {
      const session = /** @type {SessionDetail} */ (await ctx.api('GET', `/sessions/${encodeURIComponent(id)}`));
      current = { id, listed: true };
      // a conversation kept before sessions recorded their collection opens none
      if (session.collection) await ctx.openCollection(session.collection);
      showTurns(session);
      showCurrent();
    } catch (err) {
      ctx.onError(err);
    }
  }

  /** @param {SessionDetail} session */
  function showTurns(session) {
    thread.replaceChildren(
      ...session.turns.map((t) =>
        h(
          'li',
          {},
          h('p', { class: 'thread-q' }, t.question),
          h('p', { class: 'thread-a' }, ...ctx.withMarkers(t.answer, t.citations, t.collection)),
        ),
      ),
    );
    thread.hidden = session.turns.length === 0;
  }

  /** A new conversation: nothing listed until its first answer. */
  function start() {
    current = { id: newSessionId(), listed: false };
    thread.replaceChildren();
    thread.hidden = true;
    showCurrent();
  }

  byId('conv-new').addEventListener('click', () => {
    start();
    byId('answer').hidden = true;
  });

  return {
    refresh,
    /** The session the next answer is asked in. */
    sessionId: () => current.id,
    /** Before an answer in a listed conversation: its turns so far above the answer that comes. */
    async beforeAnswer() {
      if (!current.listed) return;
      try {
        showTurns(/** @type {SessionDetail} */ (await ctx.api('GET', `/sessions/${encodeURIComponent(current.id)}`)));
      } catch (err) {
        ctx.onError(err);
      }
    },
    /** A new conversation (a collection was opened by hand). */
    start,
  };
}
