import { getDocumentProxy, getResolvedPDFJS, renderPageAsImage } from 'unpdf';
import { DocumentTooLargeError, MalformedDocumentError, UnsupportedFormatError } from './errors.ts';
import type { Deadline, ExtractLimits } from './limits.ts';
import { OcrImageError, type OcrEngine } from './ocr.ts';
import type { Page } from './text.ts';

// PDF through unpdf's build of pdf.js, one page at a time (pages numbered from 1), so memory stays flat and the
// deadline is checked between pages. A page without a text layer is OCR'd on demand: rendered with
// @napi-rs/canvas and read by the OCR engine. Only a page that paints something OCR could read (an image, or
// many paths such as text converted to outlines) is rendered, so a digital PDF with blank pages never starts OCR.

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;
type PdfPage = Awaited<ReturnType<PdfDocument['getPage']>>;

/** About 144 dpi for a letter page, and never more than this many pixels whatever the page size. */
const RENDER_SCALE = 2;
const MAX_RENDER_PIXELS = 16_000_000;
/** Path drawings that make a page worth OCR when it paints no image (text converted to outlines). */
const OUTLINE_PATHS = 200;

export async function extractPdf(
  bytes: Uint8Array,
  ctx: { filename: string; ocr: OcrEngine; limits: ExtractLimits; deadline: Deadline },
): Promise<{ pages: Page[]; ocrPages: number }> {
  const { filename, limits, deadline } = ctx;
  let pdf: PdfDocument;
  try {
    // pdf.js takes ownership of the buffer it is given: hand it a copy
    pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, verbosity: 0, stopAtErrors: false });
  } catch (err) {
    if ((err as Error)?.name === 'PasswordException') {
      throw new UnsupportedFormatError(
        `${filename} is password-protected: remove the password (print or export it to an unprotected PDF) and upload it again.`,
      );
    }
    throw new MalformedDocumentError(
      `${filename} cannot be read as a PDF (${(err as Error)?.message ?? err}): it is damaged or truncated. Export it again and upload the complete file.`,
    );
  }
  try {
    if (pdf.numPages > limits.maxPdfPages) {
      throw new DocumentTooLargeError(
        `${filename} has ${pdf.numPages} pages; the limit is ${limits.maxPdfPages}. Split it into smaller PDFs and upload them separately.`,
      );
    }
    const pages: Page[] = [];
    let ocrPages = 0;
    for (let n = 1; n <= pdf.numPages; n++) {
      deadline.check();
      const page = await readPage(pdf, n, filename);
      try {
        let text = await pageText(page, n, filename);
        if (!text.trim() && (await worthOcr(page))) {
          if (++ocrPages > limits.maxOcrPages) {
            throw new DocumentTooLargeError(
              `${filename} needs OCR on more than ${limits.maxOcrPages} pages (they have no text layer): split it into smaller PDFs, or upload a PDF with a text layer.`,
            );
          }
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

async function readPage(pdf: PdfDocument, n: number, filename: string): Promise<PdfPage> {
  try {
    return await pdf.getPage(n);
  } catch (err) {
    throw new MalformedDocumentError(
      `${filename} is damaged: page ${n} cannot be read (${(err as Error)?.message ?? err}). Export it again and upload it again.`,
    );
  }
}

async function pageText(page: PdfPage, n: number, filename: string): Promise<string> {
  try {
    const content = await page.getTextContent();
    let text = '';
    for (const item of content.items) {
      if ('str' in item) text += item.str + (item.hasEOL ? '\n' : '');
    }
    return text;
  } catch (err) {
    throw new MalformedDocumentError(`${filename} is damaged: the text of page ${n} cannot be read (${(err as Error)?.message ?? err}).`);
  }
}

async function worthOcr(page: PdfPage): Promise<boolean> {
  const { OPS } = await getResolvedPDFJS();
  const images = new Set<number>([
    OPS.paintImageXObject,
    OPS.paintInlineImageXObject,
    OPS.paintInlineImageXObjectGroup,
    OPS.paintImageXObjectRepeat,
    OPS.paintImageMaskXObject,
    OPS.paintImageMaskXObjectGroup,
    OPS.paintImageMaskXObjectRepeat,
  ]);
  const { fnArray } = await page.getOperatorList();
  let paths = 0;
  for (const fn of fnArray) {
    if (images.has(fn)) return true;
    if (fn === OPS.constructPath && ++paths >= OUTLINE_PATHS) return true;
  }
  return false;
}

async function ocrPage(
  pdf: PdfDocument,
  page: PdfPage,
  n: number,
  ctx: { filename: string; ocr: OcrEngine; deadline: Deadline },
): Promise<string> {
  const { width, height } = page.getViewport({ scale: 1 });
  const scale = Math.min(RENDER_SCALE, Math.sqrt(MAX_RENDER_PIXELS / Math.max(1, width * height)));
  let image: ArrayBuffer;
  try {
    image = await renderPageAsImage(pdf, n, { canvasImport: () => import('@napi-rs/canvas'), scale });
  } catch (err) {
    throw new MalformedDocumentError(
      `${ctx.filename} is damaged: page ${n} has no text layer and cannot be rendered for OCR (${(err as Error)?.message ?? err}).`,
    );
  }
  ctx.deadline.check();
  try {
    return await ctx.ocr.recognize(new Uint8Array(image));
  } catch (err) {
    if (err instanceof OcrImageError)
      throw new MalformedDocumentError(`${ctx.filename}: page ${n} could not be read by OCR (${err.message}).`);
    throw err;
  }
}
