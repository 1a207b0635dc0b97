import type { Deadline } from './limits.ts';
import type { OfficePackage } from './package.ts';
import type { Page } from './text.ts';
import { decodeXml, dirOf, elements, relationships, relsPartOf, startTags } from './xml.ts';

// PowerPoint: one page per slide, numbered in presentation order (the slide id list, not the part names). Text
// frames and tables are read in the order they appear on the slide; a table row is a line of cells joined by " | ".

export async function extractPptx(pkg: OfficePackage, deadline: Deadline): Promise<Page[]> {
  const presentation = (await pkg.zip.text(pkg.main)) ?? '';
  const rels = relationships((await pkg.zip.text(relsPartOf(pkg.main))) ?? '', dirOf(pkg.main));
  const targets = new Map(rels.filter((r) => r.type === 'slide').map((r) => [r.id, r.target]));
  const order = startTags(presentation, 'p:sldId').map((a) => targets.get(a['r:id'] ?? ''));
  const pages: Page[] = [];
  for (const [i, part] of order.entries()) {
    deadline.check();
    const xml = (part && (await pkg.zip.text(part))) || '';
    pages.push({ page: i + 1, text: slideLines(xml).join('\n') });
  }
  return pages;
}

/** Paragraphs as lines and table rows as lines, in document order. */
export function slideLines(xml: string): string[] {
  const lines: string[] = [];
  for (const m of xml.matchAll(/<a:tbl>[\s\S]*?<\/a:tbl>|<a:p(?:\s[^>]*)?(?<!\/)>[\s\S]*?<\/a:p>/g)) {
    const block = m[0];
    if (block.startsWith('<a:tbl>')) {
      for (const row of elements(block, 'a:tr')) {
        lines.push(elements(row, 'a:tc').map((cell) => elements(cell, 'a:p').map(paragraphText).join(' ').trim()).join(' | '));
      }
    } else lines.push(paragraphText(block));
  }
  return lines.filter((l) => l.replace(/[\s|]/g, ''));
}

/** The runs of a paragraph; a line break inside it becomes a space. */
const paragraphText = (p: string) =>
  [...p.matchAll(/<a:t(?:\s[^>]*)?>([\s\S]*?)<\/a:t>|<a:br\b/g)].map((m) => (m[1] === undefined ? ' ' : decodeXml(m[1]))).join('').trim();
