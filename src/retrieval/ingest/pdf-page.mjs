// How a page without a text layer is rendered for OCR, shared by pdf.ts (the main thread) and pdf-worker.mjs (the
// worker threads), in plain JavaScript because a worker thread starts without the TypeScript loader. Both paths give
// the same image. The text itself is read by PDFium (pdf-text.mjs); pdf.js, which loads only with the first page to
// render, stays for this because it renders straight to @napi-rs/canvas and its PNG.

/** About 144 dpi for a letter page, and never more than this many pixels whatever the page size. */
const RENDER_SCALE = 2;
const MAX_RENDER_PIXELS = 16_000_000;

/** Page `n` as a PNG for OCR, rendered with @napi-rs/canvas (loaded with the first page rendered). */
export async function renderForOcr(pdf, page, n) {
  const { width, height } = page.getViewport({ scale: 1 });
  const scale = Math.min(RENDER_SCALE, Math.sqrt(MAX_RENDER_PIXELS / Math.max(1, width * height)));
  const { renderPageAsImage } = await import('unpdf');
  return renderPageAsImage(pdf, n, { canvasImport: () => import('@napi-rs/canvas'), scale });
}

/** The options every document is opened with for rendering, on either thread. */
export const OPEN_OPTIONS = { isEvalSupported: false, verbosity: 0, stopAtErrors: false };
