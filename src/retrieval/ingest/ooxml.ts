import mammoth from 'mammoth';
import { parseHTML } from 'linkedom';
import { MalformedDocumentError } from './errors.ts';
import type { Page } from './text.ts';
import { entryText, type Package } from './zip.ts';
import { decodeXml, elements, runText } from './xml.ts';

// DOCX through mammoth (one page: a DOCX has no fixed pages); PPTX per slide and XLSX per sheet read from the
// package's XML, the page being the slide or sheet number. Table rows stay rows: cells joined by " | ".

export async function extractDocx(pkg: Package, bytes: Uint8Array): Promise<Page[]> {
  if (!pkg.entries.has('word/document.xml')) throw new MalformedDocumentError('This .docx package has no word/document.xml.');
  const { value: html } = await mammoth.convertToHtml({ buffer: Buffer.from(bytes) });
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  const lines: string[] = [];
  const walk = (node: Element) => {
    for (const child of Array.from(node.children)) {
      const tag = child.tagName.toLowerCase();
      if (tag === 'table') {
        for (const row of Array.from(child.querySelectorAll('tr'))) {
          lines.push(Array.from(row.querySelectorAll('td,th')).map((c) => (c.textContent ?? '').trim()).join(' | '));
        }
      } else if (/^(p|h[1-6]|li)$/.test(tag)) lines.push((child.textContent ?? '').trim());
      else walk(child);
    }
  };
  walk(document.body);
  return [{ page: 1, text: lines.filter(Boolean).join('\n') }];
}

export function extractPptx(pkg: Package): Page[] {
  const presentation = entryText(pkg, 'ppt/presentation.xml');
  const rels = entryText(pkg, 'ppt/_rels/presentation.xml.rels');
  if (!presentation || !rels) throw new MalformedDocumentError('This .pptx package has no ppt/presentation.xml.');
  const targets = new Map<string, string>();
  for (const m of rels.matchAll(/<Relationship\b[^>]*>/g)) {
    const id = /\bId="([^"]+)"/.exec(m[0])?.[1];
    const target = /\bTarget="([^"]+)"/.exec(m[0])?.[1];
    if (id && target) targets.set(id, target.replace(/^\/?(ppt\/)?/, 'ppt/'));
  }
  const order = [...presentation.matchAll(/<p:sldId\b[^>]*r:id="([^"]+)"/g)].map((m) => targets.get(m[1]!));
  return order.map((path, i) => {
    const xml = (path && entryText(pkg, path)) || '';
    const lines: string[] = [];
    // tables first as rows, then the remaining paragraphs
    for (const table of elements(xml, 'a:tbl')) {
      for (const row of elements(table, 'a:tr')) lines.push(elements(row, 'a:tc').map((c) => runText(c, 'a:t').trim()).join(' | '));
    }
    const withoutTables = xml.replace(/<a:tbl>[\s\S]*?<\/a:tbl>/g, '');
    for (const p of elements(withoutTables, 'a:p')) lines.push(runText(p, 'a:t'));
    return { page: i + 1, text: lines.filter((l) => l.trim()).join('\n') };
  });
}

export function extractXlsx(pkg: Package): Page[] {
  const workbook = entryText(pkg, 'xl/workbook.xml');
  const rels = entryText(pkg, 'xl/_rels/workbook.xml.rels');
  if (!workbook || !rels) throw new MalformedDocumentError('This .xlsx package has no xl/workbook.xml.');
  const shared = elements(entryText(pkg, 'xl/sharedStrings.xml') ?? '', 'si').map((si) => runText(si, 't'));
  const targets = new Map<string, string>();
  for (const m of rels.matchAll(/<Relationship\b[^>]*>/g)) {
    const id = /\bId="([^"]+)"/.exec(m[0])?.[1];
    const target = /\bTarget="([^"]+)"/.exec(m[0])?.[1];
    if (id && target) targets.set(id, target.startsWith('/') ? target.slice(1) : `xl/${target}`);
  }
  const sheets = [...workbook.matchAll(/<sheet\b[^>]*>/g)].map((m) => ({
    name: decodeXml(/\bname="([^"]*)"/.exec(m[0])?.[1] ?? ''),
    path: targets.get(/\br:id="([^"]+)"/.exec(m[0])?.[1] ?? ''),
  }));
  return sheets.map((sheet, i) => {
    const xml = (sheet.path && entryText(pkg, sheet.path)) || '';
    const lines = [sheet.name];
    for (const row of elements(xml, 'row')) {
      const cells: string[] = [];
      for (const m of row.matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
        const type = /\bt="([^"]+)"/.exec(m[1] ?? '')?.[1];
        const inner = m[2] ?? '';
        const value = elements(inner, 'v')[0];
        if (type === 's') cells.push(shared[Number(value)] ?? '');
        else if (type === 'inlineStr') cells.push(runText(inner, 't'));
        else if (value !== undefined) cells.push(decodeXml(value));
      }
      if (cells.some((c) => c.trim())) lines.push(cells.join(' | '));
    }
    return { page: i + 1, text: lines.join('\n') };
  });
}
