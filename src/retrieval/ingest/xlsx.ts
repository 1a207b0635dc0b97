import type { Deadline } from './limits.ts';
import type { OfficePackage } from './package.ts';
import type { Page } from './text.ts';
import { decodeXml, dirOf, elements, relationships, relsPartOf, startTags } from './xml.ts';

// Excel: one page per sheet, numbered in workbook tab order, the sheet name as its first line and then one line
// per row with the cell values joined by " | ". Values as stored: shared and inline strings, numbers (dates stay
// serial numbers), booleans as TRUE/FALSE, formula results; formulas themselves are not text.

export async function extractXlsx(pkg: OfficePackage, deadline: Deadline): Promise<Page[]> {
  const workbook = (await pkg.zip.text(pkg.main)) ?? '';
  const rels = relationships((await pkg.zip.text(relsPartOf(pkg.main))) ?? '', dirOf(pkg.main));
  const targets = new Map(rels.map((r) => [r.id, r.target]));
  const sharedPart = rels.find((r) => r.type === 'sharedStrings')?.target ?? `${dirOf(pkg.main)}sharedStrings.xml`;
  const shared = sharedStrings((await pkg.zip.text(sharedPart)) ?? '');
  const sheets = startTags(workbook, 'sheet').map((a) => ({ name: a.name ?? '', part: targets.get(a['r:id'] ?? '') }));
  const pages: Page[] = [];
  for (const [i, sheet] of sheets.entries()) {
    deadline.check();
    const xml = (sheet.part && (await pkg.zip.text(sheet.part))) || '';
    pages.push({ page: i + 1, text: [sheet.name, ...sheetRows(xml, shared)].join('\n') });
  }
  return pages;
}

/** The shared string table; phonetic guides (rPh) are not part of the value. */
export const sharedStrings = (xml: string): string[] =>
  elements(xml, 'si').map((si) => elements(si.replace(/<(\w+:)?rPh\b[\s\S]*?<\/(\w+:)?rPh>/g, ''), 't').map(decodeXml).join(''));

export function sheetRows(xml: string, shared: readonly string[]): string[] {
  const rows: string[] = [];
  for (const row of elements(xml, 'row')) {
    const cells: string[] = [];
    for (const m of row.matchAll(/<(?:\w+:)?c(?=[\s/>])([^>]*?)(?:\/>|>([\s\S]*?)<\/(?:\w+:)?c>)/g)) {
      const type = /\bt="([^"]+)"/.exec(m[1] ?? '')?.[1];
      const inner = m[2] ?? '';
      const value = elements(inner, 'v')[0];
      if (type === 's') cells.push(shared[Number(value)] ?? '');
      else if (type === 'inlineStr') cells.push(elements(inner, 't').map(decodeXml).join(''));
      else if (type === 'b') cells.push(value === '1' ? 'TRUE' : value === '0' ? 'FALSE' : '');
      else cells.push(value === undefined ? '' : decodeXml(value));
    }
    while (cells.length && !cells.at(-1)!.trim()) cells.pop();
    if (cells.some((c) => c.trim())) rows.push(cells.join(' | '));
  }
  return rows;
}
