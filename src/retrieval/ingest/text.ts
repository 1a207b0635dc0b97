import { parseHTML } from 'linkedom';

export type Page = { page: number; text: string };

/** UTF-8 with the byte-order mark dropped; invalid sequences become U+FFFD (best effort for text/*). */
export const decodeText = (bytes: Uint8Array): string => new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');

const BLOCKS = 'p,div,br,li,tr,h1,h2,h3,h4,h5,h6,section,article,header,footer,table,pre,blockquote';

/** Tags stripped; script, style, noscript and template dropped; block elements end a line; cells joined by " | ". */
export function htmlText(html: string): string {
  const { document } = parseHTML(html.includes('<html') ? html : `<!doctype html><html><body>${html}</body></html>`);
  for (const el of Array.from(document.querySelectorAll('script,style,noscript,template,head'))) el.remove();
  for (const cell of Array.from(document.querySelectorAll('td,th'))) {
    if (cell.nextElementSibling) cell.append(document.createTextNode(' | '));
  }
  for (const el of Array.from(document.querySelectorAll(BLOCKS))) el.append(document.createTextNode('\n'));
  const text = document.body?.textContent ?? document.documentElement?.textContent ?? '';
  return text.replace(/[ \t\u00a0]+/g, ' ').replace(/\s*\n\s*/g, '\n').trim();
}
