import { DocumentTooLargeError, MalformedDocumentError, UnsupportedFormatError } from './errors.ts';
import type { Deadline, ExtractLimits } from './limits.ts';
import { openPdfText, type PdfTextDocument } from './pdf-text.mjs';
import type { PdfWorkers, WorkerFailure } from './pdf-workers.ts';
import { OcrImageError, type OcrEngine } from './ocr.ts';
import type { Page } from './text.ts';

// PDF text read by PDFium (pdf-text.mjs), one page at a time (pages numbered from 1), so the deadline is checked
// between pages; on the PDF worker threads when the service has them (pdf-workers.ts), else on this thread. A page
// without a text layer is OCR'd on demand: rendered as a PNG by PDFium (on a PDF worker when there are workers, so
// PDFium never loads on this thread) and read by the OCR engine. Only a page that paints something OCR could read (an
// image, or many paths such as text converted to outlines) is rendered, so a digital PDF with blank pages never starts
// OCR.

export async function extractPdf(
  bytes: Uint8Array,
  ctx: {
    filename: string;
    ocr: OcrEngine;
    limits: ExtractLimits;
    deadline: Deadline;
    workers?: PdfWorkers | undefined;
    signal?: AbortSignal | undefined;
    /** Told the page being read and the page count. */
    onProgress?: ((page: number, pages: number) => void) | undefined;
  },
): Promise<{ pages: Page[]; ocrPages: number }> {
  if (ctx.workers) return extractOnWorkers(bytes, ctx, ctx.workers);
  const { filename, limits, deadline } = ctx;
  const pdf = await openPdf(bytes, filename);
  try {
    if (pdf.numPages > limits.maxPdfPages) throw tooManyPages(filename, pdf.numPages, limits);
    const pages: Page[] = [];
    let ocrPages = 0;
    for (let n = 1; n <= pdf.numPages; n++) {
      // PDFium reads a page synchronously: a turn of the event loop between pages keeps this thread answering
      await new Promise((resolve) => setImmediate(resolve));
      deadline.check();
      ctx.onProgress?.(n, pdf.numPages);
      const read = pdf.page(n);
      if ('failure' in read) throw failureError(read.failure, filename, pdf.numPages, limits, deadline);
      let text = read.text;
      if (read.ocr) {
        if (++ocrPages > limits.maxOcrPages) throw tooManyOcrPages(filename, limits);
        text = await ocrPage(pdf, n, ctx, deadline);
      }
      pages.push({ page: n, text });
    }
    return { pages, ocrPages };
  } finally {
    pdf.close();
  }
}

/**
 * The same answer, read on the worker threads: every page's text there, then OCR of the pages that have no text and
 * paint something OCR could read, each rendered on a worker and read by the OCR engine (rare: a scan is slow
 * whichever thread renders it).
 */
async function extractOnWorkers(
  bytes: Uint8Array,
  ctx: {
    filename: string;
    ocr: OcrEngine;
    limits: ExtractLimits;
    deadline: Deadline;
    signal?: AbortSignal | undefined;
    onProgress?: ((page: number, pages: number) => void) | undefined;
  },
  workers: PdfWorkers,
): Promise<{ pages: Page[]; ocrPages: number }> {
  const { filename, limits, deadline } = ctx;
  deadline.check();
  const read = await workers.read(bytes, { maxPages: limits.maxPdfPages, signal: ctx.signal, onProgress: ctx.onProgress });
  deadline.check();
  if ('failure' in read) throw failureError(read.failure, filename, read.numPages, limits, deadline);
  const scanned = read.pages.filter((p) => p.ocr);
  if (scanned.length > limits.maxOcrPages) throw tooManyOcrPages(filename, limits);
  if (scanned.length === 0) return { pages: read.pages.map(({ page, text }) => ({ page, text })), ocrPages: 0 };
  const pages: Page[] = [];
  for (const { page: n, text, ocr } of read.pages) {
    if (!ocr) {
      pages.push({ page: n, text });
      continue;
    }
    deadline.check();
    const rendered = await workers.render(bytes, n);
    if ('failure' in rendered) throw failureError(rendered.failure, filename, read.numPages, limits, deadline);
    deadline.check();
    pages.push({ page: n, text: await recognize(rendered.image, n, ctx) });
  }
  return { pages, ocrPages: scanned.length };
}

function failureError(
  failure: WorkerFailure,
  filename: string,
  numPages: number | undefined,
  limits: ExtractLimits,
  deadline: Deadline,
): Error {
  switch (failure.kind) {
    case 'password':
      return passwordProtected(filename);
    case 'open':
      return unreadable(filename, failure.message);
    case 'pages':
      return tooManyPages(filename, numPages ?? 0, limits);
    case 'page':
      return damagedPage(filename, failure.page, failure.message);
    case 'text':
      return damagedText(filename, failure.page, failure.message);
    case 'render':
      return unrenderable(filename, failure.page, failure.message);
    case 'cancelled':
      // the signal was aborted or the deadline passed: check() throws which
      deadline.check();
      return new Error(`reading ${filename} on a PDF worker stopped: cancelled`);
  }
}

async function openPdf(bytes: Uint8Array, filename: string): Promise<PdfTextDocument> {
  const pdf = await openPdfText(bytes);
  if ('failure' in pdf) throw pdf.failure.kind === 'password' ? passwordProtected(filename) : unreadable(filename, pdf.failure.message);
  return pdf;
}

const passwordProtected = (filename: string) =>
  new UnsupportedFormatError(
    `${filename} is password-protected: remove the password (print or export it to an unprotected PDF) and upload it again.`,
  );
const unreadable = (filename: string, why: string) =>
  new MalformedDocumentError(
    `${filename} cannot be read as a PDF (${why}): it is damaged or truncated. Export it again and upload the complete file.`,
  );
const tooManyPages = (filename: string, numPages: number, limits: ExtractLimits) =>
  new DocumentTooLargeError(
    `${filename} has ${numPages} pages; the limit is ${limits.maxPdfPages}. Split it into smaller PDFs and upload them separately.`,
  );
const tooManyOcrPages = (filename: string, limits: ExtractLimits) =>
  new DocumentTooLargeError(
    `${filename} needs OCR on more than ${limits.maxOcrPages} pages (they have no text layer): split it into smaller PDFs, or upload a PDF with a text layer.`,
  );
const damagedPage = (filename: string, n: number, why: string) =>
  new MalformedDocumentError(`${filename} is damaged: page ${n} cannot be read (${why}). Export it again and upload it again.`);
const unrenderable = (filename: string, n: number, why: string) =>
  new MalformedDocumentError(`${filename} is damaged: page ${n} has no text layer and cannot be rendered for OCR (${why}).`);
const damagedText = (filename: string, n: number, why: string) =>
  new MalformedDocumentError(`${filename} is damaged: the text of page ${n} cannot be read (${why}).`);

async function ocrPage(
  pdf: PdfTextDocument,
  n: number,
  ctx: { filename: string; ocr: OcrEngine; limits: ExtractLimits },
  deadline: Deadline,
): Promise<string> {
  const rendered = pdf.render(n);
  if ('failure' in rendered) throw failureError(rendered.failure, ctx.filename, pdf.numPages, ctx.limits, deadline);
  deadline.check();
  return recognize(rendered.image, n, ctx);
}

async function recognize(image: ArrayBuffer, n: number, ctx: { filename: string; ocr: OcrEngine }): Promise<string> {
  try {
    return await ctx.ocr.recognize(new Uint8Array(image));
  } catch (err) {
    if (err instanceof OcrImageError)
      throw new MalformedDocumentError(`${ctx.filename}: page ${n} could not be read by OCR (${err.message}).`);
    throw err;
  }
}
