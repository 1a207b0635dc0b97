import type { Deadline } from './limits.ts';
import type { OfficePackage } from './package.ts';
import type { Page } from './text.ts';
import { dirOf, relationships, relsPartOf, startTags, type XmlVisitor } from './xml.ts';

// PowerPoint: one page per slide, numbered in presentation order (the slide id list, not the part names). Text
// frames and tables are read in the order they appear on the slide; a table row is a line of cells joined by " | ".

export async function extractPptx(pkg: OfficePackage, deadline: Deadline): Promise<Page[]> {
  const presentation = (await pkg.zip.text(pkg.main)) ?? '';
  const relsPart = relsPartOf(pkg.main);
  const rels = await relationships(pkg.xml, (await pkg.zip.text(relsPart)) ?? '', relsPart, dirOf(pkg.main));
  const targets = new Map(rels.filter((r) => r.type === 'slide').map((r) => [r.id, r.target]));
  const order = (await startTags(pkg.xml, presentation, pkg.main, 'p:sldId')).map((a) => targets.get(a['r:id'] ?? ''));
  const pages: Page[] = [];
  for (const [i, part] of order.entries()) {
    deadline.check();
    const slide = slideReader();
    if (part) await pkg.readPart(part, slide.visitor);
    pages.push({ page: i + 1, text: slide.lines().join('\n') });
  }
  return pages;
}

/**
 * Paragraphs (`a:p`) as lines and table rows (`a:tr`) as lines, in document order: a paragraph is its runs
 * (`a:t`), a line break (`a:br`) a space; a table cell is its paragraphs joined by spaces.
 */
export function slideReader(): { visitor: XmlVisitor; lines(): string[] } {
  const lines: string[] = [];
  let paragraph: string | undefined;
  let inRun = 0;
  let row: string[] | undefined;
  let cell: string[] | undefined;
  const visitor: XmlVisitor = {
    open(tag) {
      switch (tag.name) {
        case 'a:p':
          paragraph = '';
          break;
        case 'a:t':
          inRun++;
          break;
        case 'a:br':
          if (paragraph !== undefined) paragraph += ' ';
          break;
        case 'a:tr':
          row = [];
          break;
        case 'a:tc':
          cell = [];
          break;
      }
    },
    text(text) {
      if (inRun > 0 && paragraph !== undefined) paragraph += text;
    },
    close(name) {
      switch (name) {
        case 'a:t':
          inRun--;
          break;
        case 'a:p': {
          const text = (paragraph ?? '').trim();
          paragraph = undefined;
          if (cell) cell.push(text);
          else lines.push(text);
          break;
        }
        case 'a:tc':
          row?.push((cell ?? []).join(' ').trim());
          cell = undefined;
          break;
        case 'a:tr':
          lines.push((row ?? []).join(' | '));
          row = undefined;
          break;
      }
    },
  };
  return { visitor, lines: () => lines.filter((l) => l.replace(/[\s|]/g, '')) };
}
