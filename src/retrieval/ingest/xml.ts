import { DocumentTooLargeError, MalformedDocumentError, UnprocessableDocumentError } from './errors.ts';
import type { Deadline, ExtractLimits } from './limits.ts';
import { lookupTable } from '../../platform/lookup-table.ts';

// Office XML read by a linear scanner. Regular expressions over a part went quadratic on hostile input (an
// unclosed `<row>` repeated 120 000 times held the event loop for 16 s, out of reach of any deadline), so a part
// is read in one pass that looks at each character a bounded number of times, keeps an element stack (end tags
// must match, a part must close what it opens), and bounds depth and element count. Every SLICE characters it
// checks the deadline and gives the event loop back, so even a long part never holds the process.

export type XmlBounds = Pick<ExtractLimits, 'maxElements' | 'maxDepth'>;

/** An element as the scanner met it; attributes are parsed only when asked for. */
export type XmlTag = {
  /** The qualified name as written ('a:t', 'row'). */
  readonly name: string;
  /** The name without its prefix ('t', 'row'). */
  readonly local: string;
  attr(name: string): string | undefined;
  readonly attrs: Record<string, string>;
};

export type XmlVisitor = {
  open?(tag: XmlTag): void;
  /** Also called for a self-closed element, right after open. */
  close?(name: string, local: string): void;
  /** Character data inside the root element, entities decoded (CDATA as written). */
  text?(text: string): void;
};

export type XmlReader = {
  scan(xml: string, part: string, visitor: XmlVisitor): Promise<void>;
  /** Elements scanned so far in this document. */
  readonly elements: number;
};

const SLICE = 1 << 16;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
/** Characters that end a name: space, '/', '>', '=' (and the end of the text). */
const endsName = (c: number) => isSpace(c) || c === 0x2f || c === 0x3e || c === 0x3d || Number.isNaN(c);

/** One reader per document: the element budget is shared by its parts. */
export function xmlReader(opts: { filename: string; limits: XmlBounds; deadline: Deadline }): XmlReader {
  const { filename, limits, deadline } = opts;
  let elements = 0;

  return {
    get elements() {
      return elements;
    },
    async scan(xml, part, visitor) {
      const damaged = (what: string, at: number) =>
        new MalformedDocumentError(
          `${filename} is damaged: its part ${part} is not well-formed XML (${what} at character ${at}). Save it again from the Office application and upload it again.`,
        );
      const stack: string[] = [];
      const n = xml.length;
      let nextPause = SLICE;
      let i = 0;
      let rooted = false;
      while (i < n) {
        if (i >= nextPause) {
          await yieldToLoop();
          deadline.check();
          nextPause = i + SLICE;
        }
        const lt = xml.indexOf('<', i);
        const textEnd = lt < 0 ? n : lt;
        if (textEnd > i && stack.length > 0 && visitor.text) visitor.text(decodeXml(xml.slice(i, textEnd)));
        if (lt < 0) break;
        const next = xml.charCodeAt(lt + 1);
        if (next === 0x2f) {
          // end tag
          const gt = xml.indexOf('>', lt + 2);
          if (gt < 0) throw damaged('an end tag that never ends', lt);
          const name = xml.slice(lt + 2, gt).trimEnd();
          const open = stack.pop();
          if (open === undefined) throw damaged(`an end tag </${name.slice(0, 40)}> with nothing open`, lt);
          if (open !== name) throw damaged(`</${name.slice(0, 40)}> closing <${open}>`, lt);
          visitor.close?.(name, localName(name));
          i = gt + 1;
        } else if (next === 0x3f) {
          // processing instruction or the XML declaration
          const end = xml.indexOf('?>', lt + 2);
          if (end < 0) throw damaged('a processing instruction that never ends', lt);
          i = end + 2;
        } else if (next === 0x21) {
          if (xml.startsWith('<!--', lt)) {
            const end = xml.indexOf('-->', lt + 4);
            if (end < 0) throw damaged('a comment that never ends', lt);
            i = end + 3;
          } else if (xml.startsWith('<![CDATA[', lt)) {
            const end = xml.indexOf(']]>', lt + 9);
            if (end < 0) throw damaged('a CDATA section that never ends', lt);
            if (stack.length > 0) visitor.text?.(xml.slice(lt + 9, end));
            i = end + 3;
          } else if (xml.startsWith('<!DOCTYPE', lt)) {
            // Office packages may not declare a DTD (ECMA-376 part 2); entity expansion has no place here
            throw new MalformedDocumentError(
              `${filename} is not a genuine Office file: its part ${part} declares a document type (DTD), which Office files never do. Save it again from the Office application and upload it again.`,
            );
          } else {
            throw damaged('a markup declaration', lt);
          }
        } else {
          // start tag: its name, then attributes up to '>' or '/>', a '>' inside a quoted value not ending it
          let j = lt + 1;
          while (!endsName(xml.charCodeAt(j))) j++;
          const name = xml.slice(lt + 1, j);
          if (!name) throw damaged('a "<" that starts no tag', lt);
          const attrStart = j;
          let selfClosed = false;
          for (;;) {
            while (isSpace(xml.charCodeAt(j))) j++;
            const c = xml.charCodeAt(j);
            if (c === 0x3e) break;
            if (c === 0x2f && xml.charCodeAt(j + 1) === 0x3e) {
              selfClosed = true;
              j++;
              break;
            }
            if (Number.isNaN(c)) throw damaged(`a start tag <${name.slice(0, 40)}> that never ends`, lt);
            const nameStart = j;
            while (!endsName(xml.charCodeAt(j))) j++;
            if (j === nameStart) throw damaged(`a stray character in the tag <${name.slice(0, 40)}>`, j);
            while (isSpace(xml.charCodeAt(j))) j++;
            if (xml.charCodeAt(j) !== 0x3d) throw damaged(`an attribute without a value in <${name.slice(0, 40)}>`, j);
            j++;
            while (isSpace(xml.charCodeAt(j))) j++;
            const quote = xml[j];
            if (quote !== '"' && quote !== "'") throw damaged(`an unquoted attribute value in <${name.slice(0, 40)}>`, j);
            const close = xml.indexOf(quote, j + 1);
            if (close < 0) throw damaged(`an attribute value that never ends in <${name.slice(0, 40)}>`, j);
            j = close + 1;
          }
          if (stack.length === 0) {
            if (rooted) throw damaged('a second root element', lt);
            rooted = true;
          }
          if (++elements > limits.maxElements) {
            throw new DocumentTooLargeError(
              `${filename} holds more than ${limits.maxElements} XML elements (the limit, reached in ${part}): split the document into smaller files and upload them separately.`,
            );
          }
          if (stack.length >= limits.maxDepth) {
            throw new UnprocessableDocumentError(
              `${filename} nests XML elements more than ${limits.maxDepth} deep in ${part} (the limit; Office never writes that deep): it is damaged or crafted. Save it again from the Office application and upload it again.`,
            );
          }
          if (visitor.open) visitor.open(tag(name, xml.slice(attrStart, selfClosed ? j - 1 : j)));
          if (selfClosed) visitor.close?.(name, localName(name));
          else stack.push(name);
          i = j + 1;
        }
      }
      if (stack.length > 0) throw damaged(`<${stack.at(-1)!.slice(0, 40)}> never closed`, n);
      if (!rooted && xml.trim()) throw damaged('text without a root element', 0);
    },
  };
}

const localName = (name: string) => name.slice(name.indexOf(':') + 1);

function tag(name: string, rawAttributes: string): XmlTag {
  let parsed: Record<string, string> | undefined;
  const attrs = () => (parsed ??= parseAttributes(rawAttributes));
  return {
    name,
    local: localName(name),
    attr: (key) => attrs()[key],
    get attrs() {
      return attrs();
    },
  };
}

/** Attributes of a start tag the scanner already checked (names, '=', quoted values): one pass. */
function parseAttributes(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  let j = 0;
  for (;;) {
    while (isSpace(raw.charCodeAt(j))) j++;
    if (j >= raw.length) return out;
    const start = j;
    while (!endsName(raw.charCodeAt(j))) j++;
    const key = raw.slice(start, j);
    j = raw.indexOf('=', j) + 1;
    while (isSpace(raw.charCodeAt(j))) j++;
    const quote = raw[j]!;
    const close = raw.indexOf(quote, j + 1);
    out[key] = decodeXml(raw.slice(j + 1, close));
    j = close + 1;
  }
}

const ENTITIES: Record<string, string> = lookupTable({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" });
/** Longest entity reference looked for: '&#x10FFFF;' and the named ones are shorter. */
const MAX_ENTITY = 12;

/** Character and predefined entity references decoded; anything else left as written. One pass. */
export function decodeXml(text: string): string {
  let amp = text.indexOf('&');
  if (amp < 0) return text;
  let out = '';
  let from = 0;
  while (amp >= 0) {
    const semi = text.indexOf(';', amp + 1);
    if (semi > amp && semi - amp <= MAX_ENTITY) {
      const code = text.slice(amp + 1, semi);
      const value = entity(code);
      if (value !== undefined) {
        out += text.slice(from, amp) + value;
        from = semi + 1;
      }
    }
    amp = text.indexOf('&', amp + 1);
  }
  return out + text.slice(from);
}

function entity(code: string): string | undefined {
  if (code[0] !== '#') return ENTITIES[code];
  const hex = code[1] === 'x' || code[1] === 'X';
  const digits = code.slice(hex ? 2 : 1);
  if (!digits || !(hex ? /^[0-9a-f]+$/i : /^[0-9]+$/).test(digits)) return undefined;
  const n = parseInt(digits, hex ? 16 : 10);
  return n <= 0x10ffff ? String.fromCodePoint(n) : undefined;
}

/** Whether a tag is `name`: a qualified name ('p:sldId') matches exactly, a bare local name ('row') any prefix. */
export const isTag = (tag: { name: string; local: string }, name: string) => (name.includes(':') ? tag.name === name : tag.local === name);

/** The attributes of every start tag `name` in a part (a bare local name matches any prefix). */
export async function startTags(reader: XmlReader, xml: string, part: string, name: string): Promise<Record<string, string>[]> {
  const found: Record<string, string>[] = [];
  await reader.scan(xml, part, { open: (t) => isTag(t, name) && found.push(t.attrs) });
  return found;
}

export type Relationship = { id: string; type: string; target: string; external: boolean };

/** The relationships of an OPC .rels part, targets resolved against the folder of the part they belong to. */
export async function relationships(reader: XmlReader, relsXml: string, part: string, baseDir: string): Promise<Relationship[]> {
  return (await startTags(reader, relsXml, part, 'Relationship')).map((a) => ({
    id: a.Id ?? '',
    type: (a.Type ?? '').slice((a.Type ?? '').lastIndexOf('/') + 1),
    target: a.TargetMode === 'External' ? (a.Target ?? '') : resolvePart(baseDir, a.Target ?? ''),
    external: a.TargetMode === 'External',
  }));
}

/** A part name from a relationship target: absolute ('/ppt/x.xml') or relative to `baseDir`, with '..' resolved. */
export function resolvePart(baseDir: string, target: string): string {
  const parts = target.startsWith('/') ? [] : baseDir.split('/').filter(Boolean);
  for (const seg of target.split('/')) {
    if (seg === '..') parts.pop();
    else if (seg && seg !== '.') parts.push(seg);
  }
  return parts.join('/');
}

/** The .rels part that holds the relationships of `part` ('word/document.xml' -> 'word/_rels/document.xml.rels'). */
export function relsPartOf(part: string): string {
  const slash = part.lastIndexOf('/');
  return `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}

export const dirOf = (part: string) => part.slice(0, part.lastIndexOf('/') + 1);
