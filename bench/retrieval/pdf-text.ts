// PDF text extraction alone, on this thread: pdf.js (unpdf, as svc's PDF workers read before 2026-11-29) against PDFium
// compiled to WebAssembly (@embedpdf/pdfium, svc's reader since: src/retrieval/ingest/pdf-text.mjs), on the LangChain
// bench's documents (langchain-docs.ts). Prints ms per document for each and whether both read the same words in the
// same order (whitespace aside).
//   npx tsx bench/retrieval/pdf-text.ts [documents=40] [rounds=3]
import { readFileSync } from 'node:fs';
import { getDocumentProxy } from 'unpdf';
import { openPdfText } from '../../src/retrieval/ingest/pdf-text.mjs';
import { mixedDoc, tenPageDoc, type BenchDoc } from './langchain-docs.ts';

/** The options svc opened documents with in pdf.js. */
const OPEN_OPTIONS = { isEvalSupported: false, verbosity: 0, stopAtErrors: false };

const count = Number(process.argv[2] ?? 40);
const rounds = Number(process.argv[3] ?? 3);

/** The text layer as svc read it with pdf.js before PDFium: items in order, a newline where pdf.js marks a line's end. */
async function pageText(page: { getTextContent(): Promise<{ items: object[] }> }): Promise<string> {
  let text = '';
  for (const item of (await page.getTextContent()).items)
    if ('str' in item) text += (item as { str: string }).str + ((item as { hasEOL?: boolean }).hasEOL ? '\n' : '');
  return text;
}

async function pdfjsText(bytes: Uint8Array): Promise<string[]> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes), OPEN_OPTIONS);
  const pages: string[] = [];
  for (let n = 1; n <= pdf.numPages; n++) {
    const page = await pdf.getPage(n);
    pages.push(await pageText(page));
    page.cleanup();
  }
  await pdf.destroy();
  return pages;
}

const t0 = performance.now();
await openPdfText(tenPageDoc(0).bytes).then((d) => 'close' in d && d.close());
const initMs = performance.now() - t0;

/** svc's reader (pdf-text.mjs): every page's text. */
async function pdfiumText(bytes: Uint8Array): Promise<string[]> {
  const pdf = await openPdfText(bytes);
  if ('failure' in pdf) throw new Error(pdf.failure.message);
  const pages: string[] = [];
  try {
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = pdf.page(n);
      if ('failure' in page) throw new Error(page.failure.message);
      pages.push(page.text);
    }
  } finally {
    pdf.close();
  }
  return pages;
}

const words = (pages: string[]) => pages.map((p) => p.split(/\s+/).filter(Boolean).join(' '));

async function time(name: string, docs: BenchDoc[], read: (b: Uint8Array) => Promise<string[]>) {
  const perRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    for (const d of docs) await read(d.bytes);
    perRound.push((performance.now() - t) / docs.length);
  }
  return `${name} ${perRound.map((x) => x.toFixed(2)).join(' / ')} ms a document`;
}

for (const [set, docs] of [
  ['ten-page', Array.from({ length: count }, (_, d) => tenPageDoc(d))],
  ['mixed', Array.from({ length: count }, (_, d) => mixedDoc(d))],
] as const) {
  let same = 0;
  let sameAsWritten = 0;
  for (const d of docs) {
    const a = words(await pdfjsText(d.bytes));
    const b = words(await pdfiumText(d.bytes));
    if (a.length === b.length && a.every((p, i) => p === b[i])) same++;
    else if (same === 0) console.log('first difference', JSON.stringify(a).slice(0, 300), JSON.stringify(b).slice(0, 300));
    if (words(d.pages.map((l) => l.join('\n'))).every((p, i) => p === b[i])) sameAsWritten++;
  }
  const pages = docs.reduce((s, d) => s + d.pages.length, 0);
  console.log(
    `${set}: ${docs.length} documents, ${pages} pages; same words and order ${same}/${docs.length}, PDFium as written ${sameAsWritten}/${docs.length}`,
  );
  console.log(`  ${await time('pdf.js', docs, pdfjsText)}`);
  console.log(`  ${await time('PDFium', docs, pdfiumText)}`);
}
console.log(
  `PDFium start (wasm compile and init, first document) ${initMs.toFixed(1)} ms; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
);
