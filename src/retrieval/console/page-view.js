// @ts-check
// A cited page, as it looks and as text. A PDF whose original the service keeps is drawn on a canvas by pdf.js
// (served from the installed package under ui/vendor/, its worker from this origin, no eval, no WebAssembly, so the
// page's strict CSP holds), with the quote's text items covered by highlight boxes; under it, and for every other
// format, the page's chunks with the quote marked. Answers' [n] markers are buttons that open their page here.
import { byId, h } from './dom.js';

/** @typedef {import('./types.ts').Citation} Citation */
/** @typedef {import('./types.ts').PageView} PageView */
/** @typedef {typeof import('pdfjs-dist')} PdfJs */
/** @typedef {import('pdfjs-dist/types/src/display/api').TextItem} TextItem */

const VENDOR = new URL('./vendor/', import.meta.url);
/** The widest a page is drawn, in CSS pixels. */
const MAX_WIDTH = 900;

/** @type {Promise<PdfJs> | null} */
let loading = null;
/** pdf.js, loaded the first time a PDF page is opened. */
function pdfjs() {
  loading ??= import(new URL('pdf.mjs', VENDOR).href).then((/** @type {PdfJs} */ lib) => {
    lib.GlobalWorkerOptions.workerSrc = new URL('pdf.worker.mjs', VENDOR).href;
    return lib;
  });
  return loading;
}

/**
 * @param {{ api: (method: string, path: string) => Promise<unknown>, headers: () => Record<string, string>,
 *   onError: (err: unknown) => void }} ctx
 */
export function createPageView(ctx) {
  /**
   * Opens the cited page: drawn when it is a kept PDF, and as text.
   * @param {string} slug
   * @param {Citation} citation
   */
  async function open(slug, citation) {
    try {
      const base = `/collections/${slug}/documents/${citation.document_id}`;
      const page = /** @type {PageView} */ (await ctx.api('GET', `${base}/pages/${citation.page}`));
      byId('pv-title').textContent = `${page.filename} · page ${page.page} of ${page.pages}`;
      byId('pv-text').replaceChildren(...page.chunks.map((chunk) => chunkView(chunk, citation)));
      const render = byId('pv-render');
      render.replaceChildren();
      render.hidden = true;
      byId('page-view').hidden = false;
      if (/\.pdf$/i.test(page.filename)) await drawPdfPage(`${base}/original`, citation, render);
      byId('page-view').scrollIntoView({ block: 'nearest' });
    } catch (err) {
      ctx.onError(err);
    }
  }

  /**
   * Draws the page from the original file; a document without one (not kept, or let go) keeps its text view only.
   * @param {string} url
   * @param {Citation} citation
   * @param {HTMLElement} render
   */
  async function drawPdfPage(url, citation, render) {
    const res = await fetch(url, { headers: ctx.headers() });
    if (!res.ok) {
      render.replaceChildren(h('p', { class: 'muted' }, 'The original file is not kept: the page is shown as text.'));
      render.hidden = false;
      return;
    }
    const lib = await pdfjs();
    const params = {
      data: new Uint8Array(await res.arrayBuffer()),
      // pdf.js 6 compiles nothing with eval any more; said anyway, so no build of it would
      isEvalSupported: false,
      // JBIG2 and JPEG 2000 images decode without WebAssembly, which the page's CSP does not allow
      useWasm: false,
      standardFontDataUrl: new URL('standard_fonts/', VENDOR).href,
    };
    const task = lib.getDocument(params);
    const doc = await task.promise;
    try {
      const page = await doc.getPage(citation.page);
      const unscaled = page.getViewport({ scale: 1 });
      const scale = Math.min(2, Math.min(MAX_WIDTH, render.parentElement?.clientWidth || MAX_WIDTH) / unscaled.width);
      const viewport = page.getViewport({ scale });
      const canvas = h('canvas', {
        class: 'pv-canvas',
        width: Math.floor(viewport.width),
        height: Math.floor(viewport.height),
        role: 'img',
        'aria-label': `page ${citation.page} of ${citation.filename}`,
      });
      const sheet = h('div', { class: 'pv-sheet' }, canvas);
      // sized through the CSSOM, which the CSP allows (an inline style attribute it would refuse)
      sheet.style.width = `${canvas.width}px`;
      sheet.style.height = `${canvas.height}px`;
      render.replaceChildren(sheet);
      render.hidden = false;
      await page.render({ canvas, viewport }).promise;
      const items = /** @type {TextItem[]} */ ((await page.getTextContent()).items.filter((i) => 'str' in i));
      const boxes = quoteBoxes(items, citation.quote, (m) => lib.Util.transform(viewport.transform, m), viewport.scale);
      sheet.append(...boxes.map((b) => highlight(b)));
      if (boxes.length === 0) render.append(h('p', { class: 'muted' }, 'The quote is marked in the text below.'));
    } finally {
      await task.destroy();
    }
  }

  /**
   * The answer's text with each cited [n] as a button opening its page.
   * @param {string} answer
   * @param {Citation[]} citations
   * @param {string} slug
   */
  function withMarkers(answer, citations, slug) {
    const byMarker = new Map(citations.map((c) => [c.marker, c]));
    return answer.split(/(\[\d+\])/).map((part) => {
      const citation = byMarker.get(Number(/^\[(\d+)\]$/.exec(part)?.[1]));
      if (!citation) return part;
      return h(
        'button',
        {
          type: 'button',
          class: 'marker',
          title: `${citation.filename}, page ${citation.page}`,
          'aria-label': `source ${citation.marker}: ${citation.filename}, page ${citation.page}`,
          dataset: { marker: citation.marker },
          onclick: () => open(slug, citation),
        },
        part,
      );
    });
  }

  return { open, withMarkers };
}

/**
 * A chunk of the page, the quote marked in the cited one.
 * @param {{ chunk_id: string, text: string }} chunk
 * @param {Citation} citation
 */
function chunkView(chunk, citation) {
  const cited = chunk.chunk_id === citation.chunk_id;
  const at = cited && citation.quote ? chunk.text.indexOf(citation.quote) : -1;
  const body =
    at < 0 ? [chunk.text] : [chunk.text.slice(0, at), h('mark', {}, citation.quote), chunk.text.slice(at + citation.quote.length)];
  return h('div', { class: cited ? 'chunk cited' : 'chunk' }, ...body);
}

/** @param {{ left: number, top: number, width: number, height: number }} box */
function highlight(box) {
  const el = h('div', { class: 'pv-highlight', 'aria-hidden': 'true' });
  el.style.left = `${box.left}px`;
  el.style.top = `${box.top}px`;
  el.style.width = `${box.width}px`;
  el.style.height = `${box.height}px`;
  return el;
}

/** @param {string} s */
const fold = (s) => s.replace(/\s+/g, ' ').toLowerCase();

/**
 * Where the quote is drawn: the page's text items read as one string (a space at each line end), the quote found in
 * it whatever the spacing and case, and a box in viewport pixels for the part of each item it covers.
 * @param {TextItem[]} items
 * @param {string} quote
 * @param {(m: number[]) => number[]} toViewport the item's matrix in viewport space
 * @param {number} scale
 * @returns {{ left: number, top: number, width: number, height: number }[]}
 */
export function quoteBoxes(items, quote, toViewport, scale) {
  const wanted = fold(quote).trim();
  if (!wanted) return [];
  let text = '';
  /** @type {{ item: TextItem, start: number }[]} */
  const spans = [];
  for (const item of items) {
    if (text && !text.endsWith(' ') && !item.str.startsWith(' ')) text += ' ';
    spans.push({ item, start: text.length });
    text += fold(item.str);
    if (item.hasEOL && !text.endsWith(' ')) text += ' ';
  }
  const at = text.indexOf(wanted);
  if (at < 0) return [];
  const end = at + wanted.length;
  return spans.flatMap(({ item, start }) => {
    const length = fold(item.str).length;
    if (length === 0 || start + length <= at || start >= end) return [];
    const from = Math.max(0, at - start) / length;
    const to = Math.min(length, end - start) / length;
    const m = toViewport(item.transform);
    const fontHeight = Math.hypot(/** @type {number} */ (m[2]), /** @type {number} */ (m[3]));
    const width = item.width * scale;
    return [{ left: (m[4] ?? 0) + width * from, top: (m[5] ?? 0) - fontHeight, width: width * (to - from), height: fontHeight * 1.2 }];
  });
}
