import JSZip from 'jszip';
import { MalformedDocumentError } from './errors.ts';
import type { OfficePackage } from './package.ts';
import type { Page } from './text.ts';

// Word documents through mammoth (paragraphs, headings, lists, tables, footnotes), its HTML walked so that each
// paragraph is a line and each table row a line of cells joined by " | ". A .docx has no fixed pages (they exist
// only once Word lays the text out), so the whole document is page 1.
//
// mammoth opens the archive itself and would inflate whatever it reads without a bound, so it is handed a copy
// holding only the XML parts, already inflated under the package's budget; images are never read. Each part is
// first read by the package's linear XML scanner, so a crafted part (nesting thousands deep, millions of
// elements, not well-formed) is refused under the same bounds as PowerPoint and Excel before mammoth parses it.
// mammoth and linkedom load with the first Word document: a process that reads none does not carry them (35 MB).

export async function extractDocx(pkg: OfficePackage, filename: string): Promise<Page[]> {
  const copy = new JSZip();
  for (const name of pkg.zip.names) {
    if (!/\.(xml|rels)$/i.test(name)) continue;
    await pkg.readPart(name, {});
    copy.file(name, (await pkg.zip.bytes(name))!);
  }
  const buffer = await copy.generateAsync({ type: 'nodebuffer', compression: 'STORE' });
  const [{ default: mammoth }, { parseHTML }] = await Promise.all([import('mammoth'), import('linkedom')]);
  let html: string;
  try {
    const result = await mammoth.convertToHtml({ buffer }, {
      convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
      externalFileAccess: false,
    } as Parameters<typeof mammoth.convertToHtml>[1]);
    html = result.value;
  } catch (err) {
    throw new MalformedDocumentError(
      `${filename} cannot be read as a Word document (${(err as Error).message}): save it again from Word and upload it again.`,
    );
  }
  return [{ page: 1, text: htmlLines(html, parseHTML).join('\n') }];
}

/** One line per paragraph, heading or list item; one line per table row with cells joined by " | ". */
export function htmlLines(html: string, parseHTML: typeof import('linkedom').parseHTML): string[] {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  for (const br of Array.from(document.querySelectorAll('br'))) br.replaceWith(document.createTextNode(' '));
  const lines: string[] = [];
  const text = (node: Node) => (node.textContent ?? '').replace(/\s+/g, ' ').trim();
  const block = (el: Element): void => {
    const tag = el.tagName.toLowerCase();
    if (tag === 'table') {
      for (const row of Array.from(el.querySelectorAll('tr')).filter((tr) => tr.closest('table') === el)) {
        const cells = Array.from(row.children).filter((c) => /^t[dh]$/i.test(c.tagName));
        lines.push(cells.map(text).join(' | '));
      }
    } else if (tag === 'li') {
      // the item's own text on its line, then its nested lists and tables as their own lines
      const nested = (n: Node) => n.nodeType === 1 && /^(ul|ol|table)$/i.test((n as Element).tagName);
      lines.push(
        Array.from(el.childNodes)
          .filter((n) => !nested(n))
          .map(text)
          .join(' '),
      );
      for (const child of Array.from(el.children)) if (nested(child)) block(child);
    } else if (/^(p|h[1-6]|pre|blockquote)$/.test(tag)) lines.push(text(el));
    else walk(el);
  };
  const walk = (parent: Element) => {
    for (const el of Array.from(parent.children)) block(el);
  };
  walk(document.body);
  return lines.filter((l) => l.replace(/[\s|]/g, ''));
}
