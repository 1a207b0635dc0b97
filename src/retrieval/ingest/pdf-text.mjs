// A PDF's text, page by page, read by PDFium compiled to WebAssembly (@embedpdf/pdfium), and a page without text
// rendered as a PNG for OCR, shared by pdf.ts (the main thread) and pdf-worker.mjs (the worker threads), in plain
// JavaScript because a worker thread starts without the TypeScript loader. PDFium reads the text layer about twice as
// fast as pdf.js did (bench/retrieval/pdf-text.ts). The module loads with the first PDF a thread reads (about 50 ms,
// the wasm compiled lazily), so a service that reads no PDF never holds it.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

/** Path objects that make a page worth OCR when it paints no image (text converted to outlines). */
const OUTLINE_PATHS = 200;
/** PDFium's page object types (fpdf_edit.h). */
const PATH = 2;
const IMAGE = 3;
const FORM = 5;
/** FPDF_RenderPageBitmap's flags (fpdfview.h): annotations drawn, and the bytes in RGBA order rather than BGRA. */
const RENDER_FLAGS = 0x01 | 0x10;
const BITMAP_BGRA = 4;
/** About 144 dpi for a letter page, and never more than this many pixels whatever the page size. */
const RENDER_SCALE = 2;
const MAX_RENDER_PIXELS = 16_000_000;
/** PDFium's FPDF_GetLastError codes (fpdfview.h). */
const ERR_PASSWORD = 4;
const ERR_SECURITY = 5;
const WHY = {
  1: 'an unknown error',
  2: 'the file cannot be found or opened',
  3: 'it is not in PDF format or is corrupted',
  4: 'it needs a password',
  5: 'its security handler is not supported',
  6: 'a page is not found or its content is damaged',
};
/**
 * Wasm memory only grows: once a document has grown it past this, the module is let go when the document closes
 * (the next PDF loads a new one), so one large PDF does not hold a worker's memory until it stops.
 */
const KEEP_HEAP_BYTES = 96 * 1024 * 1024;

let loading;
let loaded;
/** Modules a document trapped (see guarded). */
const trapped = new WeakSet();

function pdfium() {
  loading ??= (async () => {
    const { init } = await import('@embedpdf/pdfium');
    const wasm = await readFile(createRequire(import.meta.url).resolve('@embedpdf/pdfium/pdfium.wasm'));
    const module = await init({ wasmBinary: wasm });
    module.PDFiumExt_Init();
    loaded = module;
    return module;
  })().catch((err) => {
    loading = undefined; // the next PDF tries again
    throw err;
  });
  return loading;
}

/** Loads PDFium ahead of a first PDF (a worker about to be asked for pages). */
export async function loadPdfText() {
  await pdfium();
}

const why = (code) => WHY[code] ?? `PDFium error ${code}`;

/**
 * A document PDFium traps on (a wasm fault, an abort) is refused as damaged, like one it reports an error for, and
 * the module is let go: after a trap its memory may be inconsistent, so the next PDF loads a new one.
 */
function guarded(p, read, failure) {
  const sound = !trapped.has(p);
  try {
    return read();
  } catch (err) {
    // another document trapped this module first: not this document's fault (a 500, not a refusal)
    if (!sound) throw err;
    trapped.add(p);
    if (loaded === p) loading = loaded = undefined;
    return { failure: { ...failure, message: `PDFium failed on it: ${err?.message ?? err}` } };
  }
}

/**
 * Opens a PDF: its page count and a reader of its pages, to be closed; or why it cannot be opened (`password` for
 * an encrypted document that needs a password or a security handler PDFium lacks, `open` for a damaged one).
 */
export async function openPdfText(bytes) {
  const p = await pdfium();
  const { wasmExports } = p.pdfium;
  const data = wasmExports.malloc(bytes.length);
  if (!data) return { failure: { kind: 'open', message: `no memory for ${bytes.length} bytes` } };
  p.pdfium.HEAPU8.set(bytes, data); // after malloc: a heap that grew is a new view
  const opened = guarded(p, () => ({ doc: p.FPDF_LoadMemDocument(data, bytes.length, '') }), { kind: 'open' });
  if ('failure' in opened) return opened;
  const { doc } = opened;
  if (!doc) {
    const code = p.FPDF_GetLastError();
    wasmExports.free(data);
    const kind = code === ERR_PASSWORD || code === ERR_SECURITY ? 'password' : 'open';
    return { failure: { kind, message: why(code) } };
  }
  return {
    numPages: p.FPDF_GetPageCount(doc),
    /** Page `n` (from 1): its text, a newline at each line's end, and whether a page without text is worth OCR. */
    page: (n) => guarded(p, () => readPage(p, doc, n), { kind: 'page', page: n }),
    /** Page `n` (from 1) as a PNG for OCR. */
    render: (n) => guarded(p, () => renderPage(p, doc, n), { kind: 'render', page: n }),
    close() {
      if (trapped.has(p)) return; // a module is not touched again after a trap
      p.FPDF_CloseDocument(doc);
      wasmExports.free(data);
      if (loaded === p && p.pdfium.HEAPU8.length > KEEP_HEAP_BYTES) loading = loaded = undefined;
    },
  };
}

function readPage(p, doc, n) {
  const page = p.FPDF_LoadPage(doc, n - 1);
  if (!page) return { failure: { kind: 'page', page: n, message: why(p.FPDF_GetLastError()) } };
  try {
    const textPage = p.FPDFText_LoadPage(page);
    if (!textPage) return { failure: { kind: 'text', page: n, message: 'PDFium cannot read its text' } };
    let text;
    try {
      text = textOf(p, textPage);
    } finally {
      p.FPDFText_ClosePage(textPage);
    }
    return { text, ocr: !text.trim() && worthOcr(p, page) };
  } finally {
    p.FPDF_ClosePage(page);
  }
}

function textOf(p, textPage) {
  const chars = p.FPDFText_CountChars(textPage);
  if (chars <= 0) return '';
  const { wasmExports, UTF16ToString } = p.pdfium;
  const buffer = wasmExports.malloc((chars + 1) * 2); // UTF-16 and its terminating NUL
  try {
    const written = p.FPDFText_GetText(textPage, 0, chars, buffer);
    // PDFium ends a line with \r\n; the other formats' text, and pdf.js's before, with \n
    return UTF16ToString(buffer, Math.max(0, written - 1) * 2).replace(/\r\n?/g, '\n');
  } finally {
    wasmExports.free(buffer);
  }
}

/** Whether a page paints something OCR could read: an image, or many paths (text converted to outlines). */
function worthOcr(p, page) {
  const seen = { paths: 0 };
  return paints(p, p.FPDFPage_CountObjects(page), (i) => p.FPDFPage_GetObject(page, i), seen);
}

function paints(p, count, objectAt, seen) {
  for (let i = 0; i < count; i++) {
    const object = objectAt(i);
    const type = p.FPDFPageObj_GetType(object);
    if (type === IMAGE) return true;
    if (type === PATH && ++seen.paths >= OUTLINE_PATHS) return true;
    if (type === FORM && paints(p, p.FPDFFormObj_CountObjects(object), (j) => p.FPDFFormObj_GetObject(object, j), seen)) return true;
  }
  return false;
}

function renderPage(p, doc, n) {
  const page = p.FPDF_LoadPage(doc, n - 1);
  if (!page) return { failure: { kind: 'page', page: n, message: why(p.FPDF_GetLastError()) } };
  try {
    // the page's size in points, as displayed (its rotation applied)
    const width = p.FPDF_GetPageWidthF(page);
    const height = p.FPDF_GetPageHeightF(page);
    const scale = Math.min(RENDER_SCALE, Math.sqrt(MAX_RENDER_PIXELS / Math.max(1, width * height)));
    const w = Math.max(1, Math.round(width * scale));
    const h = Math.max(1, Math.round(height * scale));
    const bitmap = p.FPDFBitmap_CreateEx(w, h, BITMAP_BGRA, 0, 0);
    if (!bitmap) return { failure: { kind: 'render', page: n, message: `no memory for a ${w}x${h} image` } };
    try {
      p.FPDFBitmap_FillRect(bitmap, 0, 0, w, h, 0xffffffff); // white paper under what the page paints
      p.FPDF_RenderPageBitmap(bitmap, page, 0, 0, w, h, 0, RENDER_FLAGS);
      return encodePng(p, p.FPDFBitmap_GetBuffer(bitmap), w, h, p.FPDFBitmap_GetStride(bitmap), n);
    } finally {
      p.FPDFBitmap_Destroy(bitmap);
    }
  } finally {
    p.FPDF_ClosePage(page);
  }
}

function encodePng(p, pixels, w, h, stride, n) {
  const { wasmExports } = p.pdfium;
  const out = wasmExports.malloc(4); // where the encoder leaves the address of the PNG it allocated
  try {
    const size = p.EPDF_PNG_EncodeRGBA(pixels, w, h, stride, 6, out);
    if (!size) return { failure: { kind: 'render', page: n, message: 'the rendered page could not be encoded as PNG' } };
    const png = p.pdfium.HEAPU32[out >> 2];
    try {
      return { image: p.pdfium.HEAPU8.slice(png, png + size).buffer };
    } finally {
      wasmExports.free(png);
    }
  } finally {
    wasmExports.free(out);
  }
}
