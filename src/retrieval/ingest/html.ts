import { Parser } from 'htmlparser2';
import { DocumentTooLargeError, UnprocessableDocumentError } from './errors.ts';
import type { Deadline, ExtractLimits } from './limits.ts';

// HTML to text: tags stripped, entities decoded by the parser, script/style/noscript/template dropped, the title
// kept as the first line, block elements ending a line and table cells joined by " | " so rows stay rows.
//
// Read as a stream of parser events (htmlparser2, the tokenizer linkedom builds its DOM from), fed a slice at a
// time with the event loop given back and the deadline checked between slices. A DOM was super-linear on hostile
// markup (600 KB of unclosed <a> held the event loop for a minute); here the work is linear in the input, with
// the parser's open-element stack bounded by the depth limit and the elements by the element limit.

const DROPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object']);
const BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'caption',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tr',
  'ul',
]);
const SLICE = 1 << 16;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function htmlText(
  html: string,
  opts: { filename: string; limits: Pick<ExtractLimits, 'maxElements' | 'maxDepth'>; deadline: Deadline },
): Promise<string> {
  const { filename, limits } = opts;
  const out: string[] = [];
  let title: string | undefined;
  let inTitle = false;
  let dropped = 0;
  let head = 0;
  let depth = 0;
  let elements = 0;
  /** Cells already seen in each open table row, innermost last. */
  const rows: number[] = [];
  const kept = () => dropped === 0 && head === 0 && !inTitle;

  const parser = new Parser(
    {
      onopentagname(name) {
        if (++elements > limits.maxElements) {
          throw new DocumentTooLargeError(
            `${filename} holds more than ${limits.maxElements} HTML elements (the limit): split the page into smaller files and upload them separately.`,
          );
        }
        if (++depth > limits.maxDepth) {
          throw new UnprocessableDocumentError(
            `${filename} nests HTML elements more than ${limits.maxDepth} deep (the limit; unclosed tags pile up this way): close its tags, or save the page again from a browser or editor, and upload it again.`,
          );
        }
        if (DROPPED.has(name)) dropped++;
        else if (name === 'head') head++;
        else if (name === 'title' && title === undefined) {
          inTitle = true;
          title = '';
        } else if (name === 'br') {
          if (kept()) out.push('\n');
        } else if (name === 'tr') rows.push(0);
        else if ((name === 'td' || name === 'th') && rows.length) {
          if (rows[rows.length - 1]! > 0 && kept()) out.push(' | ');
          rows[rows.length - 1]!++;
        }
      },
      ontext(text) {
        if (inTitle) title += text;
        else if (kept()) out.push(text);
      },
      onclosetag(name) {
        depth--;
        if (DROPPED.has(name)) dropped--;
        else if (name === 'head') head--;
        else if (name === 'title') inTitle = false;
        if (name === 'tr') rows.pop();
        if (BLOCKS.has(name) && kept()) out.push('\n');
      },
    },
    { lowerCaseAttributeNames: false, decodeEntities: true, xmlMode: false },
  );
  for (let at = 0; at < html.length; at += SLICE) {
    parser.write(html.slice(at, at + SLICE));
    await yieldToLoop();
    opts.deadline.check();
  }
  parser.end();
  return [(title ?? '').trim(), out.join('')]
    .join('\n')
    .replace(/[ \t\f\r\u00a0]+/g, ' ')
    .replace(/ ?\n[\s]*/g, '\n')
    .trim();
}
