// How a PDF page is read and rendered for OCR, shared by pdf.ts (the main thread) and pdf-worker.mjs (the worker
// threads), in plain JavaScript because a worker thread starts without the TypeScript loader. Both paths give the
// same text and the same image.
import { getResolvedPDFJS, renderPageAsImage } from 'unpdf';

/** Path drawings that make a page worth OCR when it paints no image (text converted to outlines). */
const OUTLINE_PATHS = 200;

/** The page's text layer: its items in content order, a newline where pdf.js marks the end of a line. */
export async function pageText(page) {
  const content = await page.getTextContent();
  let text = '';
  for (const item of content.items) {
    if ('str' in item) text += item.str + (item.hasEOL ? '\n' : '');
  }
  return text;
}

let paintOps;

/** Whether a page paints something OCR could read: an image, or many paths (text converted to outlines). */
export async function worthOcr(page) {
  if (!paintOps) {
    const { OPS } = await getResolvedPDFJS();
    paintOps = {
      path: OPS.constructPath,
      images: new Set([
        OPS.paintImageXObject,
        OPS.paintInlineImageXObject,
        OPS.paintInlineImageXObjectGroup,
        OPS.paintImageXObjectRepeat,
        OPS.paintImageMaskXObject,
        OPS.paintImageMaskXObjectGroup,
        OPS.paintImageMaskXObjectRepeat,
      ]),
    };
  }
  const { fnArray } = await page.getOperatorList();
  let paths = 0;
  for (const fn of fnArray) {
    if (paintOps.images.has(fn)) return true;
    if (fn === paintOps.path && ++paths >= OUTLINE_PATHS) return true;
  }
  return false;
}

/** About 144 dpi for a letter page, and never more than this many pixels whatever the page size. */
const RENDER_SCALE = 2;
const MAX_RENDER_PIXELS = 16_000_000;

/** Page `n` as a PNG for OCR, rendered with @napi-rs/canvas (loaded with the first page rendered). */
export async function renderForOcr(pdf, page, n) {
  const { width, height } = page.getViewport({ scale: 1 });
  const scale = Math.min(RENDER_SCALE, Math.sqrt(MAX_RENDER_PIXELS / Math.max(1, width * height)));
  return renderPageAsImage(pdf, n, { canvasImport: () => import('@napi-rs/canvas'), scale });
}

/** The options every document is opened with, on either thread. */
export const OPEN_OPTIONS = { isEvalSupported: false, verbosity: 0, stopAtErrors: false };
