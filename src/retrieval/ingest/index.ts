import { readFile } from 'node:fs/promises';
import { strictText, type Format } from './detect.ts';
import { DocumentTooLargeError, MalformedDocumentError, UnprocessableDocumentError, UnsupportedFormatError } from './errors.ts';
import { checkImage } from './image.ts';
import { deadline, DEFAULT_LIMITS, type Deadline, type ExtractLimits } from './limits.ts';
import { sniff } from './magic.ts';
import { OcrImageError, type OcrEngine } from './ocr.ts';
import type { OfficeFormat } from './package.ts';
import type { PdfWorkers } from './pdf-workers.ts';
import { decodeText, htmlCharset, type Page } from './text.ts';

// The extraction layer: pure functions from an upload (in memory or on disk) to its text, page by page. Pages are PDF pages,
// PPTX slides in presentation order and XLSX sheets in tab order; DOCX, HTML, Markdown, text and images are
// page 1 (a .docx has no pages until Word lays it out). Failures are the typed errors of errors.ts. Each format's
// reader (pdf.js, JSZip, htmlparser2) is loaded with the first document of its format, not with the service.

export { ACCEPTED, detectFormat, extensionOf, type Detected, type Format, type ImageKind } from './detect.ts';
export { DocumentTooLargeError, MalformedDocumentError, UnprocessableDocumentError, UnsupportedFormatError } from './errors.ts';
export { DEFAULT_LIMITS, type ExtractLimits } from './limits.ts';
export { createOcrEngine, type OcrEngine } from './ocr.ts';
export { createPdfWorkers, type PdfWorkers } from './pdf-workers.ts';
export type { Page } from './text.ts';

export type Extracted = { pages: Page[]; ocrPages: number };

/** An upload's bytes: held in memory (a small upload), or a temporary file holding the whole upload. */
export type DocumentContent = { bytes: Uint8Array } | { path: string };

export type ExtractInput = {
  filename: string;
  format: Format;
  content: DocumentContent;
  ocr: OcrEngine;
  /** The threads PDF text is read on; absent: this thread. */
  pdfWorkers?: PdfWorkers | undefined;
  /** SVC_RAG_OCR_ENABLED: gates image files only; a scanned PDF page is OCR'd whatever it says. */
  ocrEnabled: boolean;
  limits?: Partial<ExtractLimits>;
  /** Shorthand for limits.maxInflatedBytes (SVC_RAG_MAX_EXTRACTED_BYTES). */
  maxExtractedBytes?: number;
  /** Shorthand for limits.timeoutMs. */
  timeoutMs?: number;
  /** Stops the extraction at its next check when aborted (the upload turned out to be a duplicate). */
  signal?: AbortSignal;
  /** Told the page being read and the page count, as a long document is read (a PDF; other formats say nothing). */
  onProgress?: (page: number, pages: number) => void;
};

/** The modules that read each format, loaded with the first document of the format. */
const READERS: Partial<Record<Format, () => Promise<unknown>>> = {
  pdf: () => import('./pdf.ts'),
  docx: () => Promise.all([import('./package.ts'), import('./docx.ts')]),
  pptx: () => Promise.all([import('./package.ts'), import('./pptx.ts')]),
  xlsx: () => Promise.all([import('./package.ts'), import('./xlsx.ts')]),
  html: () => import('./html.ts'),
};

export async function extractDocument(input: ExtractInput): Promise<Extracted> {
  // before the clock starts: loading a reader is the service's own time, not the document's
  await READERS[input.format]?.();
  const limits: ExtractLimits = {
    ...DEFAULT_LIMITS,
    ...(input.maxExtractedBytes !== undefined ? { maxInflatedBytes: input.maxExtractedBytes } : {}),
    ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
    ...input.limits,
  };
  const until = deadline(input.filename, limits.timeoutMs, Date.now, input.signal);
  const work = contentBytes(input.content).then(async (bytes) =>
    holdsText(input, bytes, await extract(input, bytes, limits, until), limits),
  );
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

// a plain Uint8Array over the buffer read (pdf.js wants no Buffer), rather than a copy of it
const contentBytes = async (content: DocumentContent): Promise<Uint8Array> => {
  if ('bytes' in content) return content.bytes;
  const buffer = await readFile(content.path);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
};

async function extract(input: ExtractInput, bytes: Uint8Array, limits: ExtractLimits, until: Deadline): Promise<Extracted> {
  const { filename, format } = input;
  const one = (text: string): Extracted => ({ pages: [{ page: 1, text }], ocrPages: 0 });
  switch (format) {
    case 'pdf': {
      const { extractPdf } = await import('./pdf.ts');
      return extractPdf(bytes, {
        filename,
        ocr: input.ocr,
        limits,
        deadline: until,
        workers: input.pdfWorkers,
        signal: input.signal,
        onProgress: input.onProgress,
      });
    }
    case 'docx':
    case 'pptx':
    case 'xlsx': {
      const { openOfficePackage } = await import('./package.ts');
      const pkg = await openOfficePackage(bytes, { filename, claimed: format satisfies OfficeFormat, limits, deadline: until });
      const pages =
        format === 'docx'
          ? await (await import('./docx.ts')).extractDocx(pkg, filename)
          : format === 'pptx'
            ? await (await import('./pptx.ts')).extractPptx(pkg, until)
            : await (await import('./xlsx.ts')).extractXlsx(pkg, until, { filename, maxTextChars: limits.maxTextChars });
      return { pages, ocrPages: 0 };
    }
    case 'html': {
      const charset = htmlCharset(bytes);
      const html = decodeText(bytes, { filename, strict: strictText(filename), ...(charset ? { charset } : {}) });
      const { htmlText } = await import('./html.ts');
      return one(await htmlText(html, { filename, limits, deadline: until }));
    }
    case 'markdown':
    case 'text':
      return one(decodeText(bytes, { filename, strict: strictText(filename) }));
    case 'image':
      return { pages: [{ page: 1, text: await ocrImage(input, bytes, limits) }], ocrPages: 1 };
  }
}

/**
 * A document is indexed only when it yields text, and no more text than the bound: an empty file, a slide deck of
 * pictures or a scan OCR cannot read is refused (422) saying what was tried, rather than stored with no chunks.
 */
function holdsText(input: ExtractInput, bytes: Uint8Array, out: Extracted, limits: ExtractLimits): Extracted {
  const { filename, format } = input;
  let chars = 0;
  let words = false;
  for (const { text } of out.pages) {
    chars += text.length;
    words ||= text.trim() !== '';
  }
  if (chars > limits.maxTextChars) {
    throw new DocumentTooLargeError(
      `${filename} yields ${chars} characters of text; the limit is ${limits.maxTextChars}: split it into smaller files and upload them separately.`,
    );
  }
  if (words) return out;
  if (bytes.length === 0)
    throw new UnprocessableDocumentError(`${filename} is empty (0 bytes): there is no text to index. Upload the file with its content.`);
  const n = out.pages.length;
  const why =
    format === 'pdf'
      ? out.ocrPages > 0
        ? `${n === 1 ? 'its one page has no text layer' : `none of its ${n} pages has a text layer`}, and OCR was tried on ${out.ocrPages === n ? (n === 1 ? 'it' : 'all of them') : `${out.ocrPages} of them`} without finding any text. Upload a sharper scan (300 dpi) or a PDF with a text layer.`
        : `${n === 1 ? 'its one page has no text layer and no image' : `none of its ${n} pages has a text layer or an image`} OCR could read, so OCR was not tried. Upload a PDF with a text layer, or a scan of the pages.`
      : format === 'image'
        ? 'OCR found no text in the image. Upload a sharper scan (300 dpi) with the text upright.'
        : format === 'docx' || format === 'pptx' || format === 'xlsx'
          ? `${officeParts(format, n)} no text (pictures and shapes are not read; OCR is only for scanned PDFs and images). Add the text, or export the document as a PDF with a text layer, and upload it again.`
          : 'it holds only whitespace. Upload the file with its content.';
  throw new UnprocessableDocumentError(`${filename} holds no text to index: ${why}`);
}

const officeParts = (format: 'docx' | 'pptx' | 'xlsx', n: number) => {
  if (format === 'docx') return 'its body holds';
  const [one, many] = format === 'pptx' ? ['slide', 'slides'] : ['sheet', 'sheets'];
  return n === 1 ? `its one ${one} holds` : `its ${n} ${many} hold`;
};

async function ocrImage(input: ExtractInput, bytes: Uint8Array, limits: ExtractLimits): Promise<string> {
  if (!input.ocrEnabled) {
    throw new UnsupportedFormatError(
      'Image files are only indexed when OCR is on, and it is off: ask the operator to set SVC_RAG_OCR_ENABLED=true, or upload the text as a PDF or text file.',
    );
  }
  const sniffed = sniff(bytes);
  if (sniffed?.kind !== 'image') {
    throw new MalformedDocumentError(`${input.filename} is not a PNG, JPEG or TIFF image: export the image again and upload it again.`);
  }
  checkImage(bytes, sniffed.image, input.filename, limits.maxImagePixels);
  try {
    return await input.ocr.recognize(bytes);
  } catch (err) {
    if (err instanceof OcrImageError)
      throw new MalformedDocumentError(`${input.filename} is a damaged image that OCR cannot read: export it again and upload it again.`);
    throw err;
  }
}
