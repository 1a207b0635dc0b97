// Small readers for OOXML parts. The parts are machine-written XML of a known shape, so plain scanning is enough
// and avoids building a DOM for a sheet of a million cells.
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeXml(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const n = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
      return Number.isFinite(n) && n <= 0x10ffff ? String.fromCodePoint(n) : whole;
    }
    return ENTITIES[code] ?? whole;
  });
}

/**
 * The inner XML of every element `tag`, in document order ('' when self-closed). A qualified name ('a:t') matches
 * that prefix only; a bare local name ('row') matches it with any prefix or none, as SpreadsheetML may use either.
 */
export function elements(xml: string, tag: string): string[] {
  const out: string[] = [];
  const name = tag.includes(':') ? `()${tag}` : `(\\w+:)?${tag}`;
  const re = new RegExp(`<${name}(?:\\s[^>]*?)?(?:/>|>([\\s\\S]*?)</\\1${tag}>)`, 'g');
  for (const m of xml.matchAll(re)) out.push(m[2] ?? '');
  return out;
}

/** The text of every `tag` run inside `xml`, joined. */
export const runText = (xml: string, tag: string) => elements(xml, tag).map(decodeXml).join('');

/** The attributes of one start tag, by qualified name. */
export function attributes(startTag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of startTag.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) out[m[1]!] = decodeXml(m[2] ?? m[3] ?? '');
  return out;
}

/** Every start tag `<tag …>` as its attributes (a bare local name matches any prefix). */
export const startTags = (xml: string, tag: string) =>
  [...xml.matchAll(new RegExp(`<${tag.includes(':') ? tag : `(?:\\w+:)?${tag}`}(?=[\\s/>])[^>]*>`, 'g'))].map((m) => attributes(m[0]));

export type Relationship = { id: string; type: string; target: string; external: boolean };

/** The relationships of an OPC .rels part, targets resolved against the folder of the part they belong to. */
export function relationships(relsXml: string, baseDir: string): Relationship[] {
  return startTags(relsXml, 'Relationship').map((a) => ({
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
