import { DocumentTooLargeError } from './errors.ts';
import type { Deadline } from './limits.ts';
import type { OfficePackage } from './package.ts';
import type { Page } from './text.ts';
import { dirOf, relationships, relsPartOf, startTags, type XmlVisitor } from './xml.ts';

// Excel: one page per sheet, numbered in workbook tab order, the sheet name as its first line and then one line
// per row with the cell values joined by " | ". Values as stored: shared and inline strings, numbers (dates stay
// serial numbers), booleans as TRUE/FALSE, formula results; formulas themselves are not text. A sheet without a
// value is an empty page: its name alone is not content. A few bytes of XML can repeat a long shared string in
// every cell, so the text is counted as rows are built and refused past `maxTextChars`.

export async function extractXlsx(
  pkg: OfficePackage,
  deadline: Deadline,
  opts: { filename: string; maxTextChars: number },
): Promise<Page[]> {
  const workbook = (await pkg.zip.text(pkg.main)) ?? '';
  const relsPart = relsPartOf(pkg.main);
  const rels = await relationships(pkg.xml, (await pkg.zip.text(relsPart)) ?? '', relsPart, dirOf(pkg.main));
  const targets = new Map(rels.map((r) => [r.id, r.target]));
  const sharedPart = rels.find((r) => r.type === 'sharedStrings')?.target ?? `${dirOf(pkg.main)}sharedStrings.xml`;
  const strings = sharedStringsReader();
  await pkg.readPart(sharedPart, strings.visitor);
  const shared = strings.values();
  const sheets = (await startTags(pkg.xml, workbook, pkg.main, 'sheet')).map((a) => ({
    name: a.name ?? '',
    part: targets.get(a['r:id'] ?? ''),
  }));
  const pages: Page[] = [];
  let chars = 0;
  const count = (value: string) => {
    chars += value.length + 3;
    if (chars > opts.maxTextChars) {
      throw new DocumentTooLargeError(
        `${opts.filename} yields more than ${opts.maxTextChars} characters of text (the limit): split the workbook into smaller files and upload them separately.`,
      );
    }
  };
  for (const [i, sheet] of sheets.entries()) {
    deadline.check();
    const rows = sheetReader(shared, count);
    if (sheet.part) await pkg.readPart(sheet.part, rows.visitor);
    const values = rows.rows();
    pages.push({ page: i + 1, text: values.length ? [sheet.name, ...values].join('\n') : '' });
  }
  return pages;
}

/** The shared string table: each `si` is its `t` runs joined; phonetic guides (`rPh`) are not part of the value. */
export function sharedStringsReader(): { visitor: XmlVisitor; values(): string[] } {
  const values: string[] = [];
  let item: string | undefined;
  let phonetic = 0;
  let inText = 0;
  const visitor: XmlVisitor = {
    open(tag) {
      if (tag.local === 'si') item = '';
      else if (tag.local === 'rPh') phonetic++;
      else if (tag.local === 't') inText++;
    },
    text(text) {
      if (item !== undefined && inText > 0 && phonetic === 0) item += text;
    },
    close(_, local) {
      if (local === 'si') {
        values.push(item ?? '');
        item = undefined;
      } else if (local === 'rPh') phonetic--;
      else if (local === 't') inText--;
    },
  };
  return { visitor, values: () => values };
}

/**
 * Rows of a worksheet as lines of cell values joined by " | ", trailing empty cells dropped, empty rows skipped.
 * `count` sees every value as it is read, before any row is joined.
 */
export function sheetReader(
  shared: readonly string[],
  count: (value: string) => void = () => {},
): { visitor: XmlVisitor; rows(): string[] } {
  const rows: string[] = [];
  let cells: string[] | undefined;
  let cell: { type: string | undefined; value: string | undefined; inline: string } | undefined;
  let into: 'v' | 't' | undefined;
  let phonetic = 0;
  const visitor: XmlVisitor = {
    open(tag) {
      switch (tag.local) {
        case 'row':
          cells = [];
          break;
        case 'c':
          cell = { type: tag.attr('t'), value: undefined, inline: '' };
          break;
        case 'v':
          // the first value of a cell is its value
          if (cell && cell.value === undefined) {
            cell.value = '';
            into = 'v';
          }
          break;
        case 't':
          if (cell) into = 't';
          break;
        case 'rPh':
          phonetic++;
          break;
      }
    },
    text(text) {
      if (!cell) return;
      if (into === 'v') cell.value += text;
      else if (into === 't' && phonetic === 0) cell.inline += text;
    },
    close(_, local) {
      switch (local) {
        case 'v':
        case 't':
          into = undefined;
          break;
        case 'rPh':
          phonetic--;
          break;
        case 'c':
          if (cell && cells) {
            const value = cellValue(cell, shared);
            count(value);
            cells.push(value);
          }
          cell = undefined;
          break;
        case 'row':
          if (cells) {
            while (cells.length && !cells.at(-1)!.trim()) cells.pop();
            if (cells.some((c) => c.trim())) rows.push(cells.join(' | '));
          }
          cells = undefined;
          break;
      }
    },
  };
  return { visitor, rows: () => rows };
}

function cellValue(cell: { type: string | undefined; value: string | undefined; inline: string }, shared: readonly string[]): string {
  const { type, value } = cell;
  if (type === 's') return shared[Number(value)] ?? '';
  if (type === 'inlineStr') return cell.inline;
  if (type === 'b') return value === '1' ? 'TRUE' : value === '0' ? 'FALSE' : '';
  return value ?? '';
}
