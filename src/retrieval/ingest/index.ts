import { readFile } from 'node:fs/promises';
import { strictText, type Format } from './detect.ts';
import { extractDocx } from './docx.ts';
import { UnsupportedFormatError, MalformedDocumentError } from './errors.ts';
import { htmlText } from './html.ts';
import { checkImage } from './image.ts';
import { deadline, DEFAULT_LIMITS, type Deadline, type ExtractLimits } from './limits.ts';
import { sniff } from './magic.ts';
import { OcrImageError, type OcrEngine } from './ocr.ts';
import { openOfficePackage, type OfficeFormat } from './package.ts';
import { extractPdf } from './pdf.ts';
import { extractPptx } from './pptx.ts';
import { decodeText, htmlCharset, type Page } from './text.ts';
import { extractXlsx } from './xlsx.ts';

// The extraction layer: pure functions from an upload on disk to its text, page by page. Pages are PDF pages,
// PPTX slides in presentation order and XLSX sheets in tab order; DOCX, HTML, Markdown, text and images are
// page 1 (a .docx has no pages until Word lays it out). Failures are the typed errors of errors.ts.

export { ACCEPTED, detectFormat, extensionOf, type Detected, type Format, type ImageKind } from './detect.ts';
export { DocumentTooLargeError, MalformedDocumentError, UnsupportedFormatError } from './errors.ts';
export { DEFAULT_LIMITS, type ExtractLimits } from './limits.ts';
export { createOcrEngine, type OcrEngine } from './ocr.ts';
export type { Page } from './text.ts';

export type Extracted = { pages: Page[]; ocrPages: number };

export type ExtractInput = {
  filename: string;
  format: Format;
  /** A temporary file holding the whole upload. */
  path: string;
  ocr: OcrEngine;
  /** SVC_RAG_OCR_ENABLED: gates image files only; a scanned PDF page is OCR'd whatever it says. */
  ocrEnabled: boolean;
  limits?: Partial<ExtractLimits>;
  /** Shorthand for limits.maxInflatedBytes (SVC_RAG_MAX_EXTRACTED_BYTES). */
  maxExtractedBytes?: number;
  /** Shorthand for limits.timeoutMs. */
  timeoutMs?: number;
};

export async function extractDocument(input: ExtractInput): Promise<Extracted> {
  const limits: ExtractLimits = {
    ...DEFAULT_LIMITS,
    ...(input.maxExtractedBytes !== undefined ? { maxInflatedBytes: input.maxExtractedBytes } : {}),
    ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
    ...input.limits,
  };
  const until = deadline(input.filename, limits.timeoutMs);
  const work = readFile(input.path).then((buffer) => extract(input, new Uint8Array(buffer), limits, until));
  // The checks inside stop the work at the next page or part; the timer also answers when one step (a single
  // pdf.js call, one OCR page) outlasts the limit, and the abandoned work then ends at its next check.
  work.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(until.expired()), limits.timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function extract(input: ExtractInput, bytes: Uint8Array, limits: ExtractLimits, until: Deadline): Promise<Extracted> {
  const { filename, format } = input;
  const one = (text: string): Extracted => ({ pages: [{ page: 1, text }], ocrPages: 0 });
  switch (format) {
    case 'pdf':
      return extractPdf(bytes, { filename, ocr: input.ocr, limits, deadline: until });
    case 'docx':
    case 'pptx':
    case 'xlsx': {
      const pkg = await openOfficePackage(bytes, { filename, claimed: format satisfies OfficeFormat, limits, deadline: until });
      const pages = format === 'docx' ? await extractDocx(pkg, filename) : format === 'pptx' ? await extractPptx(pkg, until) : await extractXlsx(pkg, until);
      return { pages, ocrPages: 0 };
    }
    case 'html': {
      const charset = htmlCharset(bytes);
      return one(htmlText(decodeText(bytes, { filename, strict: strictText(filename), ...(charset ? { charset } : {}) })));
    }
    case 'markdown':
    case 'text':
      return one(decodeText(bytes, { filename, strict: strictText(filename) }));
    case 'image':
      return { pages: [{ page: 1, text: await ocrImage(input, bytes, limits) }], ocrPages: 1 };
  }
}

async function ocrImage(input: ExtractInput, bytes: Uint8Array, limits: ExtractLimits): Promise<string> {
  if (!input.ocrEnabled) {
    throw new UnsupportedFormatError('Image files are only indexed when OCR is on, and it is off: ask the operator to set SVC_RAG_OCR_ENABLED=true, or upload the text as a PDF or text file.');
  }
  const sniffed = sniff(bytes);
  if (sniffed?.kind !== 'image') {
    throw new MalformedDocumentError(`${input.filename} is not a PNG, JPEG or TIFF image: export the image again and upload it again.`);
  }
  checkImage(bytes, sniffed.image, input.filename, limits.maxImagePixels);
  try {
    return await input.ocr.recognize(bytes);
  } catch (err) {
    if (err instanceof OcrImageError) throw new MalformedDocumentError(`${input.filename} is a damaged image that OCR cannot read: export it again and upload it again.`);
    throw err;
  }
}
