import { getDocumentProxy } from 'unpdf';
import { DocumentTooLargeError, MalformedDocumentError, UnsupportedFormatError } from './errors.ts';
import type { Deadline, ExtractLimits } from './limits.ts';
import { OPEN_OPTIONS, pageText, renderForOcr, worthOcr } from './pdf-page.mjs';
import type { PdfWorkers, WorkerFailure } from './pdf-workers.ts';
import { OcrImageError, type OcrEngine } from './ocr.ts';
import type { Page } from './text.ts';

// PDF through unpdf's build of pdf.js, one page at a time (pages numbered from 1), so memory stays flat and the
// deadline is checked between pages; on the PDF worker threads when the service has them (pdf-workers.ts), else on
// this thread. A page without a text layer is OCR'd on demand: rendered with @napi-rs/canvas (on a PDF worker when
// there are workers, so pdf.js never loads on this thread) and read by the OCR engine. Only a page that paints
// something OCR could read (an image, or many paths such as text converted to outlines) is rendered, so a digital
// PDF with blank pages never starts OCR.

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;
type PdfPage = Awaited<ReturnType<PdfDocument['getPage']>>;

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
      deadline.check();
      ctx.onProgress?.(n, pdf.numPages);
      const page = await readPage(pdf, n, filename);
      try {
        let text = await textOf(page, n, filename);
        if (!text.trim() && (await worthOcr(page))) {
          if (++ocrPages > limits.maxOcrPages) throw tooManyOcrPages(filename, limits);
          text = await ocrPage(pdf, page, n, ctx);
        }
        pages.push({ page: n, text });
      } finally {
        page.cleanup();
      }
    }
    return { pages, ocrPages };
  } finally {
    // the text is read: the document's teardown (a message to pdf.js's worker side) need not hold up the upload
    pdf.destroy().catch(() => {});
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

async function openPdf(bytes: Uint8Array, filename: string): Promise<PdfDocument> {
  try {
    // pdf.js takes ownership of the buffer it is given: hand it a copy
    return await getDocumentProxy(new Uint8Array(bytes), OPEN_OPTIONS);
  } catch (err) {
    if ((err as Error)?.name === 'PasswordException') throw passwordProtected(filename);
    throw unreadable(filename, (err as Error)?.message ?? String(err));
  }
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

async function readPage(pdf: PdfDocument, n: number, filename: string): Promise<PdfPage> {
  try {
    return await pdf.getPage(n);
  } catch (err) {
    throw damagedPage(filename, n, (err as Error)?.message ?? String(err));
  }
}

async function textOf(page: PdfPage, n: number, filename: string): Promise<string> {
  try {
    return await pageText(page);
  } catch (err) {
    throw damagedText(filename, n, (err as Error)?.message ?? String(err));
  }
}

async function ocrPage(
  pdf: PdfDocument,
  page: PdfPage,
  n: number,
  ctx: { filename: string; ocr: OcrEngine; deadline: Deadline },
): Promise<string> {
  let image: ArrayBuffer;
  try {
    image = await renderForOcr(pdf, page, n);
  } catch (err) {
    throw unrenderable(ctx.filename, n, (err as Error)?.message ?? String(err));
  }
  ctx.deadline.check();
  return recognize(image, n, ctx);
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
