import { readFileSync } from 'node:fs';
import JSZip from 'jszip';
import { writePdf } from './pdf-writer.ts';

// Real files of every format the retrieval service accepts or refuses. Each accepted one holds a known sentence
// on a known page, so a test can ask for it and check the page.
export type Fixture = { name: string; type: string; bytes: Uint8Array; sentence?: string; page?: number; words?: number };

const enc = (s: string) => new TextEncoder().encode(s);
const filler = (topic: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${topic}${i % 13} filler${i % 7}`).join(' ');
/** Lines of at most eight words, so that no text runs off a PDF page. */
const lines = (text: string) => text.split(' ').reduce<string[][]>((acc, w, i) => (i % 8 ? acc[acc.length - 1]!.push(w) : acc.push([w]), acc), []).map((l) => l.join(' '));
const wordCount = (...texts: string[]) => texts.join(' ').split(/\s+/).filter(Boolean).length;
const x = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export const SENTENCES = {
  pdf: 'Lighthouse keepers logged the harbour fog at dawn',
  docx: 'The orchard cooperative shipped pears to Lisbon',
  pptx: 'Glacier survey drones mapped the crevasse field',
  xlsx: 'Saffron harvest yield per hectare',
  html: 'Volcanic soil favours the vineyard terraces',
  markdown: 'Migratory cranes rest at the marshland reserve',
  text: 'The submarine cable links the two islands',
  csv: 'copper wire spool inventory',
  log: 'backup job finished for the tape library',
  scanned: 'The quarterly revenue of Northwind grew by twelve percent',
};

async function ooxml(files: Record<string, string>): Promise<Uint8Array> {
  const zip = new JSZip();
  for (const [path, body] of Object.entries(files)) zip.file(path, body);
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

const rels = (items: [string, string, string][]) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${items
    .map(([id, type, target]) => `<Relationship Id="${id}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/${type}" Target="${target}"/>`)
    .join('')}</Relationships>`;

const contentTypes = (overrides: [string, string][]) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${overrides
    .map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`)
    .join('')}</Types>`;

export async function docx(paragraphs: string[], table: string[][]): Promise<Uint8Array> {
  const w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  const p = (t: string) => `<w:p><w:r><w:t xml:space="preserve">${x(t)}</w:t></w:r></w:p>`;
  const tbl = `<w:tbl>${table.map((row) => `<w:tr>${row.map((c) => `<w:tc>${p(c)}</w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`;
  return ooxml({
    '[Content_Types].xml': contentTypes([['/word/document.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml']]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'word/document.xml']]),
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${w}><w:body>${paragraphs.map(p).join('')}${tbl}</w:body></w:document>`,
  });
}

export async function pptx(slides: { texts: string[]; table?: string[][] }[]): Promise<Uint8Array> {
  const ns = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  const para = (t: string) => `<a:p><a:r><a:t>${x(t)}</a:t></a:r></a:p>`;
  const files: Record<string, string> = {
    '[Content_Types].xml': contentTypes([
      ['/ppt/presentation.xml', 'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml'],
      ...slides.map((_, i): [string, string] => [`/ppt/slides/slide${i + 1}.xml`, 'application/vnd.openxmlformats-officedocument.presentationml.slide+xml']),
    ]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'ppt/presentation.xml']]),
    'ppt/_rels/presentation.xml.rels': rels(slides.map((_, i) => [`rId${i + 10}`, 'slide', `slides/slide${i + 1}.xml`])),
    'ppt/presentation.xml': `<?xml version="1.0" encoding="UTF-8"?><p:presentation ${ns}><p:sldIdLst>${slides.map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 10}"/>`).join('')}</p:sldIdLst></p:presentation>`,
  };
  slides.forEach((s, i) => {
    const table = s.table
      ? `<p:graphicFrame><a:graphic><a:graphicData><a:tbl>${s.table.map((row) => `<a:tr>${row.map((c) => `<a:tc><a:txBody>${para(c)}</a:txBody></a:tc>`).join('')}</a:tr>`).join('')}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`
      : '';
    files[`ppt/slides/slide${i + 1}.xml`] = `<?xml version="1.0" encoding="UTF-8"?><p:sld ${ns}><p:cSld><p:spTree><p:sp><p:txBody>${s.texts.map(para).join('')}</p:txBody></p:sp>${table}</p:spTree></p:cSld></p:sld>`;
  });
  return ooxml(files);
}

export async function xlsx(sheets: { name: string; rows: (string | number)[][] }[]): Promise<Uint8Array> {
  const strings: string[] = [];
  const ref = (s: string) => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  const sheetXml = sheets.map(
    (s) =>
      `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${s.rows
        .map((row, r) => `<row r="${r + 1}">${row.map((v, c) => (typeof v === 'number' ? `<c r="${String.fromCharCode(65 + c)}${r + 1}"><v>${v}</v></c>` : `<c r="${String.fromCharCode(65 + c)}${r + 1}" t="s"><v>${ref(v)}</v></c>`)).join('')}</row>`)
        .join('')}</sheetData></worksheet>`,
  );
  const files: Record<string, string> = {
    '[Content_Types].xml': contentTypes([
      ['/xl/workbook.xml', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml'],
      ['/xl/sharedStrings.xml', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml'],
      ...sheets.map((_, i): [string, string] => [`/xl/worksheets/sheet${i + 1}.xml`, 'application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml']),
    ]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'xl/workbook.xml']]),
    'xl/_rels/workbook.xml.rels': rels([
      ...sheets.map((_, i): [string, string, string] => [`rId${i + 1}`, 'worksheet', `worksheets/sheet${i + 1}.xml`]),
      [`rId${sheets.length + 1}`, 'sharedStrings', 'sharedStrings.xml'],
    ]),
    'xl/workbook.xml': `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${sheets.map((s, i) => `<sheet name="${x(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
  };
  sheetXml.forEach((xml, i) => (files[`xl/worksheets/sheet${i + 1}.xml`] = xml));
  files['xl/sharedStrings.xml'] = `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${strings.map((s) => `<si><t>${x(s)}</t></si>`).join('')}</sst>`;
  return ooxml(files);
}

/** Every accepted format: the known sentence, its page, and how many words the file holds. */
export async function acceptedFixtures(): Promise<Fixture[]> {
  const S = SENTENCES;
  // 64 words on pages 1 and 2 (two 32-word steps), so the sentence opens a chunk on page 3
  const pdfPages = [lines(filler('harbour', 20)), lines(filler('coast', 12)), [S.pdf, ...lines(filler('dawn', 10))]];
  const slide1 = filler('slide', 16); // 32 words: slide 2 starts a chunk
  // 32 words with the sheet name: sheet 2 starts a chunk
  const sheet1: (string | number)[][] = [['Region', 'Quarter'], ...Array.from({ length: 9 }, (_, i) => [`R${i}`, i]), ['end']];
  const html = `<html><head><title>ignored title</title><style>.x{color:red}</style></head><body><h1>Soil notes</h1><script>var secretScriptWord = 1;</script><p>${S.html}.</p><table><tr><td>plot</td><td>grape</td></tr></table></body></html>`;
  return [
    { name: 'report.pdf', type: 'application/pdf', bytes: writePdf(pdfPages.map((lines) => ({ lines }))), sentence: S.pdf, page: 3, words: wordCount(...pdfPages.flat()) },
    { name: 'minutes.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: await docx([filler('minutes', 10), `${S.docx}.`], [['Fruit', 'Tonnes'], ['Pears', '12']]), sentence: S.docx, page: 1, words: wordCount(filler('minutes', 10), S.docx + '.') + 6 },
    { name: 'survey.pptx', type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', bytes: await pptx([{ texts: [slide1] }, { texts: [S.pptx], table: [['Zone', 'Depth'], ['A', '40 m']] }]), sentence: S.pptx, page: 2, words: wordCount(slide1, S.pptx) + 7 },
    { name: 'harvest.xlsx', type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', bytes: await xlsx([{ name: 'Regions', rows: sheet1 }, { name: 'Yield', rows: [[S.xlsx, 42.5], ['Total', 99]] }]), sentence: S.xlsx, page: 2 },
    { name: 'soil.html', type: 'text/html', bytes: enc(html), sentence: S.html, page: 1 },
    { name: 'birds.md', type: 'text/markdown', bytes: enc(`# Birds\n\n${S.markdown}.\n\n- ${filler('bird', 5)}\n`), sentence: S.markdown, page: 1 },
    { name: 'cable.txt', type: 'text/plain', bytes: enc(`\uFEFF${S.text}. ${filler('sea', 30)}`), sentence: S.text, page: 1, words: wordCount(S.text + '.', filler('sea', 30)) },
    { name: 'stock.csv', type: 'text/csv', bytes: enc(`item,count\n${S.csv},12\n`), sentence: S.csv, page: 1 },
    { name: 'jobs.log', type: 'text/plain', bytes: enc(`2026-01-01 INFO ${S.log}\n`), sentence: S.log, page: 1 },
    { name: 'notes.rst', type: 'text/x-rst', bytes: enc(`Notes\n=====\n\n${S.text} again.\n`), sentence: S.text, page: 1 },
  ];
}

export const scannedPdf = (): Fixture => ({
  name: 'scanned-report.pdf',
  type: 'application/pdf',
  bytes: readFileSync(new URL('../fixtures/scanned.pdf', import.meta.url)),
  sentence: SENTENCES.scanned,
  page: 2,
});

export const scanPng = (): Fixture => ({
  name: 'scan.png',
  type: 'image/png',
  bytes: readFileSync(new URL('../fixtures/scan.png', import.meta.url)),
  sentence: SENTENCES.scanned,
  page: 1,
});

/** Files the service must refuse with 400, each with what the message should name. */
export async function rejectedFixtures(): Promise<{ fixture: Fixture; says: RegExp }[]> {
  const ole2 = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Array(504).fill(0)]);
  const zip = new JSZip();
  zip.file('a.txt', 'hello');
  const plainZip = await zip.generateAsync({ type: 'uint8array' });
  const wav = new Uint8Array([...enc('RIFF'), 36, 0, 0, 0, ...enc('WAVEfmt '), 16, 0, 0, 0, 1, 0, 1, 0, 0x44, 0xac, 0, 0, 0x88, 0x58, 1, 0, 2, 0, 16, 0, ...enc('data'), 0, 0, 0, 0]);
  const mp3 = new Uint8Array([...enc('ID3'), 3, 0, 0, 0, 0, 0, 0, 0xff, 0xfb, 0x90, 0x64, ...new Array(100).fill(0)]);
  const elf = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, ...new Array(56).fill(0)]);
  const f = (name: string, bytes: Uint8Array, type = 'application/octet-stream'): Fixture => ({ name, type, bytes });
  return [
    { fixture: f('old.doc', ole2, 'application/msword'), says: /\.doc.*\.docx/ },
    { fixture: f('old.xls', ole2), says: /\.xls.*\.xlsx/ },
    { fixture: f('old.ppt', ole2), says: /\.ppt.*\.pptx/ },
    { fixture: f('bundle.zip', plainZip, 'application/zip'), says: /[Zz]ip/ },
    { fixture: f('voice.wav', wav, 'audio/wav'), says: /[Aa]udio.*transcri/ },
    { fixture: f('song.mp3', mp3, 'audio/mpeg'), says: /[Aa]udio/ },
    { fixture: f('tool', elf), says: /[Ee]xecutable/ },
    { fixture: f('fake.docx', enc('this is plain text pretending to be a docx')), says: /not an Office Open XML package/ },
    { fixture: f('fake.pdf', enc('plain text with a pdf name')), says: /not a PDF/ },
    { fixture: f('broken.pdf', enc('%PDF-1.4\n1 0 obj\n<< /Type /Catalog')), says: /PDF/ },
    { fixture: f('empty.docx', plainZip), says: /not an Office Open XML package/ },
    { fixture: f('data.bin', new Uint8Array([1, 2, 0, 0, 255, 254, 3])), says: /binary/ },
    { fixture: f('photo.png', readFileSync(new URL('../fixtures/scan.png', import.meta.url)), 'image/png'), says: /SVC_RAG_OCR_ENABLED/ },
  ];
}

/** A .docx whose one part inflates to `bytes` of zeros: a zip bomb in a small file. */
export async function zipBombDocx(bytes: number): Promise<Uint8Array> {
  const zip = new JSZip();
  zip.file('[Content_Types].xml', '<Types/>');
  zip.file('word/document.xml', new Uint8Array(bytes));
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE', compressionOptions: { level: 9 } });
}
