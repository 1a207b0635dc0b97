// @ts-check
// Notes and descriptions are Markdown, as MLflow's UI writes them, shown as HTML made safe twice: marked renders the
// Markdown with any raw HTML in it escaped (only Markdown's own syntax makes markup), then DOMPurify keeps an
// allowlist of tags and attributes (no script, image, form, style, id or event handler; links only to http(s),
// mailto or an anchor). Both come from their npm packages under ui/vendor/, loaded on the first note shown.
import { h } from './dom.js';

/** @typedef {import('./dom.js').Attrs} Attrs */

const TAGS = ['p', 'br', 'hr', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 'del', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a'];
const TABLE_TAGS = ['table', 'thead', 'tbody', 'tr', 'th', 'td'];

/** @param {string} s */
const escapeHtml = (s) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** @type {Promise<(text: string) => DocumentFragment> | undefined} */
let rendering;

async function load() {
  const [{ Marked }, { default: purify }] = await Promise.all([import('./vendor/marked.js'), import('./vendor/purify.js')]);
  const marked = new Marked({
    gfm: true,
    breaks: true,
    async: false,
    renderer: {
      // raw HTML, in a block or inline, is shown as the text it is
      html: ({ text }) => escapeHtml(text),
      // the page sits under h2: a note's headings come below it, in order
      heading({ tokens, depth }) {
        const level = Math.min(depth + 2, 6);
        return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
      },
      // an image would be fetched from anywhere (the CSP refuses it): its link is shown instead
      image: ({ href, text }) => `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`,
      // the text keeps its line break as well as the <br>, so it reads the same when copied
      br: () => '<br>\n',
    },
  });
  purify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A' && node.hasAttribute('href') && !node.getAttribute('href')?.startsWith('#')) {
      node.setAttribute('rel', 'noopener noreferrer');
      node.setAttribute('target', '_blank');
    }
  });
  return (/** @type {string} */ text) =>
    purify.sanitize(marked.parse(text, { async: false }), {
      ALLOWED_TAGS: [...TAGS, ...TABLE_TAGS],
      ALLOWED_ATTR: ['href', 'title', 'start', 'align'],
      ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
      RETURN_DOM_FRAGMENT: true,
    });
}

/**
 * Markdown text as a block of safe HTML.
 * @param {string} text
 * @param {Attrs} [attrs]
 */
export async function markdown(text, attrs = {}) {
  rendering ??= load().catch((err) => {
    rendering = undefined; // tried again on the next note
    throw err;
  });
  const fragment = (await rendering)(text);
  // the blank lines marked leaves between and around blocks are not part of the text
  for (const end of [fragment.firstChild, fragment.lastChild])
    if (end?.nodeType === Node.TEXT_NODE && !end.textContent?.trim()) end.remove();
  return h('div', { class: 'markdown', ...attrs }, fragment);
}
