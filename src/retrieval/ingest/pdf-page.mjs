// How a PDF page is read, shared by pdf.ts (the main thread) and pdf-worker.mjs (the worker threads), in plain
// JavaScript because a worker thread starts without the TypeScript loader. Both paths give the same text.
import { getResolvedPDFJS } from 'unpdf';

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

/** The options every document is opened with, on either thread. */
export const OPEN_OPTIONS = { isEvalSupported: false, verbosity: 0, stopAtErrors: false };
