import { parseHTML } from 'linkedom';

// HTML to text: tags stripped, entities decoded by the parser, script/style/noscript/template dropped, the title
// kept as the first line, block elements ending a line and table cells joined by " | " so rows stay rows.

const DROPPED = 'script,style,noscript,template,svg,canvas,iframe,object';
const BLOCKS = [
  'address', 'article', 'aside', 'blockquote', 'caption', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset', 'figcaption',
  'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre',
  'section', 'summary', 'table', 'tr', 'ul',
].join(',');

export function htmlText(html: string): string {
  const { document } = parseHTML(/<html[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`);
  const title = document.querySelector('title')?.textContent?.trim() ?? '';
  for (const el of Array.from(document.querySelectorAll(DROPPED))) el.remove();
  for (const br of Array.from(document.querySelectorAll('br'))) br.replaceWith(document.createTextNode('\n'));
  for (const cell of Array.from(document.querySelectorAll('td,th'))) {
    if (cell.nextElementSibling) cell.append(document.createTextNode(' | '));
  }
  for (const el of Array.from(document.querySelectorAll(BLOCKS))) el.append(document.createTextNode('\n'));
  const body = document.body?.textContent ?? '';
  return [title, body]
    .join('\n')
    .replace(/[ \t\f\r\u00a0]+/g, ' ')
    .replace(/ ?\n[\s]*/g, '\n')
    .trim();
}
