import { readFile } from 'node:fs/promises';
import type { Format } from './detect.ts';
import { MalformedDocumentError } from './errors.ts';
import type { OcrEngine } from './ocr.ts';
import { extractDocx, extractPptx, extractXlsx } from './ooxml.ts';
import { extractPdf } from './pdf.ts';
import { decodeText, htmlText, type Page } from './text.ts';
import { openPackage, PACKAGE_LIMITS } from './zip.ts';

export { detectFormat, type Detected, type Format } from './detect.ts';
export { createOcrEngine, type OcrEngine } from './ocr.ts';
export type { Page } from './text.ts';

export type Extracted = { pages: Page[]; ocrPages: number };

/** The text of an upload, page by page, from the file the upload was spooled to. */
export async function extractDocument(input: {
  filename: string;
  format: Format;
  path: string;
  ocr: OcrEngine;
  ocrEnabled: boolean;
  maxExtractedBytes?: number;
  timeoutMs?: number;
}): Promise<Extracted> {
  const bytes = new Uint8Array(await readFile(input.path));
  const limits = { ...PACKAGE_LIMITS, totalBytes: input.maxExtractedBytes ?? PACKAGE_LIMITS.totalBytes };
  const work = extract(input.format, bytes, input.ocr, input.ocrEnabled, limits);
  const timeoutMs = input.timeoutMs ?? 300_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new MalformedDocumentError(`Extracting ${input.filename} took longer than ${timeoutMs / 1000} s; it was abandoned.`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function extract(
  format: Format,
  bytes: Uint8Array,
  ocr: OcrEngine,
  ocrEnabled: boolean,
  limits: typeof PACKAGE_LIMITS,
): Promise<Extracted> {
  switch (format) {
    case 'pdf':
      return extractPdf(bytes, ocr);
    case 'docx':
      return { pages: await extractDocx(await openPackage(bytes, '.docx', limits), bytes), ocrPages: 0 };
    case 'pptx':
      return { pages: extractPptx(await openPackage(bytes, '.pptx', limits)), ocrPages: 0 };
    case 'xlsx':
      return { pages: extractXlsx(await openPackage(bytes, '.xlsx', limits)), ocrPages: 0 };
    case 'html':
      return { pages: [{ page: 1, text: htmlText(decodeText(bytes)) }], ocrPages: 0 };
    case 'markdown':
    case 'text':
      return { pages: [{ page: 1, text: decodeText(bytes) }], ocrPages: 0 };
    case 'image':
      if (!ocrEnabled) throw new MalformedDocumentError('Image uploads need SVC_RAG_OCR_ENABLED=true.');
      return { pages: [{ page: 1, text: await ocr.recognize(bytes) }], ocrPages: 1 };
  }
}
