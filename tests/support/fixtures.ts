import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { detectFormat, extractDocument, type ExtractLimits, type OcrEngine, type PdfWorkers } from '../../src/retrieval/ingest/index.ts';
import { scanJpeg, scanPngBytes, scanTiff } from '../fixtures/images.ts';
import { contentTypes, docx, pack, pptx, rels, xlsx } from '../fixtures/ooxml.ts';
import { writePdf } from './pdf-writer.ts';

// Real files of every format the retrieval service accepts or refuses, made at test time; only the scanned
// fixtures are committed (tests/fixtures/make-scans.ts). Each accepted file holds a known sentence on a known
// page, so a test can ask for it and check the page.
export type Fixture = { name: string; type: string; bytes: Uint8Array; sentence?: string; page?: number; words?: number };
/** The error class a refused file must raise: unsupported and malformed both answer 400. */
export type Refusal = 'UnsupportedFormatError' | 'MalformedDocumentError';

const enc = (s: string) => new TextEncoder().encode(s);
const filler = (topic: string, n: number) => Array.from({ length: n }, (_, i) => `${topic}${i % 13} filler${i % 7}`).join(' ');
/** Lines of at most eight words, so that no text runs off a PDF page. */
const lines = (text: string) =>
  text
    .split(' ')
    .reduce<string[][]>((acc, w, i) => (i % 8 ? acc[acc.length - 1]!.push(w) : acc.push([w]), acc), [])
    .map((l) => l.join(' '));
const wordCount = (...texts: string[]) => texts.join(' ').split(/\s+/).filter(Boolean).length;

export const SENTENCES = {
  pdf: 'Lighthouse keepers logged the harbour fog at dawn',
  blankPagePdf: 'The appendix lists every tide gauge on the estuary',
  docx: 'The orchard cooperative shipped pears to Lisbon',
  pptx: 'Glacier survey drones mapped the crevasse field',
  reorderedPptx: 'Ferry timetables change with the winter schedule',
  xlsx: 'Saffron harvest yield per hectare',
  inlineXlsx: 'Beehive count per apiary site',
  html: 'Volcanic soil favours the vineyard terraces',
  legacyHtml: 'The café terrace opens at noon',
  markdown: 'Migratory cranes rest at the marshland reserve',
  text: 'The submarine cable links the two islands',
  csv: 'copper wire spool inventory',
  log: 'backup job finished for the tape library',
  scanned: 'The quarterly revenue of Northwind grew by twelve percent',
  scannedFrench: "Le chiffre d'affaires de Northwind a augmenté de douze pour cent",
};

export const officeTypes = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** A digital PDF of three pages with the sentence opening page 3. */
export const reportPdf = () => {
  // 64 words on pages 1 and 2 (two 32-word steps), so the sentence opens a chunk on page 3
  const pages = [lines(filler('harbour', 20)), lines(filler('coast', 12)), [SENTENCES.pdf, ...lines(filler('dawn', 10))]];
  return { bytes: writePdf(pages.map((l) => ({ lines: l }))), words: wordCount(...pages.flat()) };
};

/** Every accepted format that needs no OCR: the known sentence, its page, and how many words the file holds. */
export async function acceptedFixtures(): Promise<Fixture[]> {
  const S = SENTENCES;
  const report = reportPdf();
  const slide1 = filler('slide', 16); // 32 words: slide 2 starts a chunk
  // 32 words with the sheet name: sheet 2 starts a chunk
  const sheet1 = [['Region', 'Quarter'], ...Array.from({ length: 9 }, (_, i) => [`R${i}`, i]), ['end']];
  const apiaries = Array.from({ length: 8 }, (_, i) => [`A${i}`, false]);
  const html = `<html><head><title>Soil survey notes</title><style>.x{color:red}</style></head><body><h1>Soil notes</h1><script>var secretScriptWord = 1;</script><p>${S.html}.</p><table><tr><td>plot</td><td>grape</td></tr></table></body></html>`;
  const latin1 = Buffer.from(
    `<html><head><meta charset="windows-1252"><title>Menu</title></head><body><p>${S.legacyHtml}.</p></body></html>`,
    'latin1',
  );
  return [
    { name: 'report.pdf', type: 'application/pdf', bytes: report.bytes, sentence: S.pdf, page: 3, words: report.words },
    {
      name: 'appendix.pdf',
      type: 'application/pdf',
      sentence: S.blankPagePdf,
      page: 3,
      // page 2 is intentionally blank: a digital PDF with a blank page must not start OCR; 32 words on page 1
      bytes: writePdf([{ lines: lines(filler('estuary', 16)) }, { lines: [] }, { lines: [S.blankPagePdf] }]),
    },
    {
      name: 'minutes.docx',
      type: officeTypes.docx,
      sentence: S.docx,
      page: 1,
      bytes: await docx([
        { paragraph: filler('minutes', 10) },
        { paragraph: `${S.docx}.` },
        {
          table: [
            ['Fruit', 'Tonnes'],
            ['Pears', '12'],
          ],
        },
      ]),
      words: wordCount(filler('minutes', 10), S.docx + '.') + 6,
    },
    {
      name: 'survey.pptx',
      type: officeTypes.pptx,
      sentence: S.pptx,
      page: 2,
      bytes: await pptx([
        { texts: [slide1] },
        {
          texts: [S.pptx],
          table: [
            ['Zone', 'Depth'],
            ['A', '40 m'],
          ],
        },
      ]),
      words: wordCount(slide1, S.pptx) + 7,
    },
    {
      // slide 2 is stored as slide1.xml: the page is the presentation order, not the part name
      name: 'ferries.pptx',
      type: officeTypes.pptx,
      sentence: S.reorderedPptx,
      page: 2,
      bytes: await pptx(
        [{ texts: [filler('harbour', 16)] }, { texts: [S.reorderedPptx, 'Check the harbour board before each crossing'] }],
        { partOrder: [2, 1] },
      ),
    },
    {
      name: 'harvest.xlsx',
      type: officeTypes.xlsx,
      sentence: S.xlsx,
      page: 2,
      bytes: await xlsx([
        { name: 'Regions', rows: sheet1 },
        {
          name: 'Yield',
          rows: [
            [S.xlsx, 42.5],
            ['Total', 99],
          ],
        },
      ]),
    },
    {
      // inline strings, a namespace prefix and booleans, as some generators write them
      name: 'apiary.xlsx',
      type: officeTypes.xlsx,
      sentence: S.inlineXlsx,
      page: 2,
      // 32 words on sheet 1 with its name, so sheet 2 starts a chunk
      bytes: await xlsx(
        [
          { name: 'Sites', rows: [['Site', 'Open'], ['North', true], ...apiaries, ['end']] },
          {
            name: 'Counts',
            rows: [
              [S.inlineXlsx, 17],
              ['Total', 17],
            ],
          },
        ],
        { inline: true, prefix: 'x', partOrder: [2, 1] },
      ),
    },
    { name: 'soil.html', type: 'text/html', bytes: enc(html), sentence: S.html, page: 1 },
    { name: 'menu.htm', type: 'text/html', bytes: new Uint8Array(latin1), sentence: S.legacyHtml, page: 1 },
    {
      name: 'birds.md',
      type: 'text/markdown',
      bytes: enc(`# Birds\n\n${S.markdown}.\n\n- ${filler('bird', 5)}\n`),
      sentence: S.markdown,
      page: 1,
    },
    {
      name: 'cable.txt',
      type: 'text/plain',
      bytes: enc(`\uFEFF${S.text}. ${filler('sea', 30)}`),
      sentence: S.text,
      page: 1,
      words: wordCount(S.text + '.', filler('sea', 30)),
    },
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
  bytes: scanPngBytes(),
  sentence: SENTENCES.scanned,
  page: 1,
});

/** The same scanned sentence as PNG, JPEG and TIFF: accepted only with OCR on. */
export async function imageFixtures(): Promise<Fixture[]> {
  return [
    scanPng(),
    { name: 'scan.jpg', type: 'image/jpeg', bytes: await scanJpeg(), sentence: SENTENCES.scanned, page: 1 },
    { name: 'scan.tiff', type: 'image/tiff', bytes: await scanTiff(), sentence: SENTENCES.scanned, page: 1 },
  ];
}

/** Files the service must refuse with 400: what the message must say, and which error the extraction layer raises. */
export async function rejectedFixtures(): Promise<{ fixture: Fixture; says: RegExp; error: Refusal }[]> {
  const ole2 = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Array(504).fill(0)]);
  const plainZip = await pack({ 'a.txt': 'hello' });
  const odt = await new JSZip()
    .file('mimetype', 'application/vnd.oasis.opendocument.text')
    .file('content.xml', '<office:document-content/>')
    .generateAsync({ type: 'uint8array' });
  const noDocument = await pack({
    '[Content_Types].xml': contentTypes([
      ['/word/document.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'],
    ]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'word/document.xml']]),
  });
  // a content type that names something every JavaScript object has, not an Office main part
  const inheritedType = await pack({
    '[Content_Types].xml': contentTypes([['/word/document.xml', 'constructor']]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'word/document.xml']]),
    'word/document.xml': '<w:document/>',
  });
  const workbook = await xlsx([{ name: 'Only', rows: [['a', 1]] }]);
  const report = reportPdf().bytes;
  const wav = new Uint8Array([
    ...enc('RIFF'),
    36,
    0,
    0,
    0,
    ...enc('WAVEfmt '),
    16,
    0,
    0,
    0,
    1,
    0,
    1,
    0,
    0x44,
    0xac,
    0,
    0,
    0x88,
    0x58,
    1,
    0,
    2,
    0,
    16,
    0,
    ...enc('data'),
    0,
    0,
    0,
    0,
  ]);
  const mp3 = new Uint8Array([...enc('ID3'), 3, 0, 0, 0, 0, 0, 0, 0xff, 0xfb, 0x90, 0x64, ...new Array(100).fill(0)]);
  const mpegFrames = new Uint8Array([0xff, 0xfb, 0x90, 0x64, ...new Array(400).fill(0x55)]);
  const ogg = new Uint8Array([...enc('OggS'), 0, 2, ...new Array(60).fill(0)]);
  const flac = new Uint8Array([...enc('fLaC'), 0, 0, 0, 34, ...new Array(34).fill(0)]);
  const m4a = new Uint8Array([0, 0, 0, 0x20, ...enc('ftypM4A '), 0, 0, 0, 0, ...enc('M4A mp42isom'), ...new Array(8).fill(0)]);
  const elf = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, ...new Array(56).fill(0)]);
  const exe = new Uint8Array([...enc('MZ'), 0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff, 0, 0, ...new Array(112).fill(0)]);
  const gif = new Uint8Array([
    ...enc('GIF89a'),
    1,
    0,
    1,
    0,
    0x80,
    0,
    0,
    0,
    0,
    0,
    0xff,
    0xff,
    0xff,
    0x21,
    0xf9,
    4,
    1,
    0,
    0,
    0,
    0,
    0x2c,
    0,
    0,
    0,
    0,
    1,
    0,
    1,
    0,
    0,
    2,
    2,
    0x44,
    1,
    0,
    0x3b,
  ]);
  const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from('Quarterly notes in UTF-16', 'utf16le')]);
  const lateLatin1 = new Uint8Array([...enc(`${filler('ledger', 1200)}\n`), ...Buffer.from('Caf\xe9 receipts\n', 'latin1')]);
  const f = (name: string, bytes: Uint8Array, type = 'application/octet-stream'): Fixture => ({ name, type, bytes });
  const U = 'UnsupportedFormatError' as const;
  const M = 'MalformedDocumentError' as const;
  return [
    { fixture: f('old.doc', ole2, 'application/msword'), says: /\.doc.*\.docx/, error: U },
    { fixture: f('old.xls', ole2), says: /\.xls.*\.xlsx/, error: U },
    { fixture: f('old.ppt', ole2), says: /\.ppt.*\.pptx/, error: U },
    { fixture: f('locked.docx', ole2, officeTypes.docx), says: /password/, error: U },
    { fixture: f('bundle.zip', plainZip, 'application/zip'), says: /[Zz]ip archives are not supported: unpack/, error: U },
    { fixture: f('report.odt', odt, 'application/vnd.oasis.opendocument.text'), says: /OpenDocument.*\.docx/, error: U },
    { fixture: f('voice.wav', wav, 'audio/wav'), says: /WAV audio.*transcri/, error: U },
    { fixture: f('song.mp3', mp3, 'audio/mpeg'), says: /MP3 audio.*transcri/, error: U },
    { fixture: f('stream.bin', mpegFrames), says: /MP3 audio/, error: U },
    { fixture: f('track.ogg', ogg), says: /Ogg audio/, error: U },
    { fixture: f('track.flac', flac), says: /FLAC audio/, error: U },
    { fixture: f('memo.m4a', m4a, 'audio/mp4'), says: /M4A audio/, error: U },
    { fixture: f('tool', elf), says: /[Ee]xecutable/, error: U },
    { fixture: f('setup.exe', exe), says: /[Ee]xecutable/, error: U },
    { fixture: f('data.bin', new Uint8Array([1, 2, 0, 0, 255, 254, 3])), says: /binary/, error: U },
    { fixture: f('notes.txt', utf16, 'text/plain'), says: /UTF-16.*save it as UTF-8/, error: U },
    { fixture: f('ledger.txt', lateLatin1, 'text/plain'), says: /not UTF-8 text.*save it with UTF-8/, error: U },
    { fixture: f('picture.gif', gif, 'image/gif'), says: /GIF images are not supported.*PNG/, error: U },
    { fixture: f('photo.png', scanPngBytes(), 'image/png'), says: /SVC_RAG_OCR_ENABLED/, error: U },
    { fixture: f('fake.docx', enc('this is plain text pretending to be a docx')), says: /not an Office Open XML package/, error: M },
    { fixture: f('fake.pdf', enc('plain text with a pdf name')), says: /not a PDF/, error: M },
    { fixture: f('broken.pdf', enc('%PDF-1.4\n1 0 obj\n<< /Type /Catalog')), says: /cannot be read as a PDF/, error: M },
    { fixture: f('truncated.pdf', report.slice(0, Math.floor(report.length / 2))), says: /damaged or truncated/, error: M },
    {
      fixture: f('locked.pdf', writePdf([{ lines: ['the locked ledger of the harbour'] }], { userPassword: 'secret' })),
      says: /locked\.pdf is password-protected: remove the password/,
      error: U,
    },
    { fixture: f('empty.docx', plainZip), says: /not an Office Open XML package/, error: M },
    { fixture: f('inherited.docx', inheritedType), says: /not an Office Open XML package of a known kind/, error: M },
    { fixture: f('hollow.docx', noDocument), says: /word\/document\.xml.*missing/, error: M },
    { fixture: f('budget.docx', workbook), says: /holds an Excel workbook.*rename it to \.xlsx/, error: M },
    { fixture: f('scan.docx', report), says: /holds a PDF.*rename/, error: M },
  ];
}

/**
 * A .docx whose main part inflates to `bytes` of zeros: a zip bomb in a small file. With `declared`, both of the
 * part's headers claim that uncompressed size instead, as a crafted bomb does to get past a size check.
 */
export async function zipBombDocx(bytes: number, declared?: number): Promise<Uint8Array> {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    contentTypes([['/word/document.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml']]),
  );
  zip.file('_rels/.rels', rels([['rId1', 'officeDocument', 'word/document.xml']]));
  zip.file('word/document.xml', new Uint8Array(bytes), { createFolders: false });
  const out = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE', compressionOptions: { level: 9 } });
  if (declared === undefined) return out;
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const name = 'word/document.xml';
  for (let i = 0; i + 46 < out.length; i++) {
    const sig = view.getUint32(i, true);
    // local file header: size at 22, name at 30; central directory header: size at 24, name at 46
    const [sizeAt, nameAt] = sig === 0x04034b50 ? [22, 30] : sig === 0x02014b50 ? [24, 46] : [0, 0];
    if (nameAt && new TextDecoder().decode(out.subarray(i + nameAt, i + nameAt + name.length)) === name)
      view.setUint32(i + sizeAt, declared, true);
  }
  return out;
}

/** What the upload path does with a fixture: detect from the first 8 KiB, then extract from a file on disk. */
export async function ingestFixture(
  f: Fixture,
  opts: { ocr: OcrEngine; ocrEnabled?: boolean; limits?: Partial<ExtractLimits>; pdfWorkers?: PdfWorkers; signal?: AbortSignal },
) {
  const ocrEnabled = opts.ocrEnabled ?? false;
  const detected = detectFormat({ filename: f.name, declaredType: f.type, head: f.bytes.subarray(0, 8192), ocrEnabled });
  const dir = await mkdtemp(join(tmpdir(), 'svc-ingest-test-'));
  try {
    const path = join(dir, 'upload');
    await writeFile(path, f.bytes);
    const extracted = await extractDocument({
      filename: f.name,
      format: detected.format,
      content: { path },
      ocr: opts.ocr,
      ocrEnabled,
      ...(opts.limits ? { limits: opts.limits } : {}),
      ...(opts.pdfWorkers ? { pdfWorkers: opts.pdfWorkers } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return { ...detected, ...extracted };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
