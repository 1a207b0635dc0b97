// A PDF text worker (plain JavaScript, so it starts the same under Node, tsx and Bun): it opens the document it is
// sent and reads pages in turn with any other workers given the same document: each takes the next page not yet
// taken from a counter they all share, so a worker the machine slows down reads fewer pages rather than holding the
// document up. The text of a page is read by the same code as on the main thread (PDFium, pdf-text.mjs). A page
// without text is reported with whether it paints anything OCR could read; the main thread then asks for such a page
// rendered as an image (by PDFium too), which it hands to OCR (so PDFium never loads on the main thread). Jobs may be
// cancelled between pages. A `warm` message only loads PDFium, for the documents to come.
import { parentPort } from 'node:worker_threads';
import { loadPdfText, openPdfText } from './pdf-text.mjs';

const reading = new Set();
const cancelled = new Set();

parentPort.on('message', (message) => {
  if (message.type === 'cancel') {
    if (reading.has(message.id)) cancelled.add(message.id);
    return;
  }
  reading.add(message.id);
  (message.type === 'render' ? render(message) : message.type === 'warm' ? warm(message) : read(message))
    .catch((err) => ({ id: message.id, failure: { kind: 'internal', message: String(err?.message ?? err) } }))
    .then((answer) => {
      reading.delete(message.id);
      cancelled.delete(message.id);
      parentPort.postMessage(answer, answer.image ? [answer.image] : []);
    });
});

/** PDFium loaded ahead of the documents this worker is to read (it joins a document only once loaded). */
async function warm({ id }) {
  await loadPdfText();
  return { id };
}

/** One page as a PNG for OCR, from a copy of the document opened for it (pages needing OCR are few, OCR is slow). */
async function render({ id, bytes, page: n }) {
  const pdf = await openPdfText(bytes);
  if ('failure' in pdf) return { id, failure: pdf.failure };
  try {
    const rendered = pdf.render(n);
    return 'failure' in rendered ? { id, failure: rendered.failure } : { id, image: rendered.image };
  } finally {
    pdf.close();
  }
}

async function read({ id, bytes, taken, maxPages, lead }) {
  const next = new Int32Array(taken);
  const pdf = await openPdfText(bytes);
  if ('failure' in pdf) return { id, failure: pdf.failure };
  try {
    const numPages = pdf.numPages;
    // the page count, for the main thread's progress (every worker writes the same number)
    Atomics.store(next, 1, numPages);
    // the lead tells the main thread the page count, which decides how many more workers the document takes
    if (lead) parentPort.postMessage({ id, opened: numPages });
    if (numPages > maxPages) return { id, numPages, failure: { kind: 'pages' } };
    const pages = [];
    for (let n = Atomics.add(next, 0, 1) + 1; n <= numPages; n = Atomics.add(next, 0, 1) + 1) {
      // PDFium reads a page synchronously: a turn of the event loop between pages lets a cancel in
      await new Promise((resolve) => setImmediate(resolve));
      if (cancelled.has(id)) return { id, numPages, failure: { kind: 'cancelled' } };
      const page = pdf.page(n);
      if ('failure' in page) return { id, numPages, failure: page.failure };
      pages.push({ page: n, text: page.text, ocr: page.ocr });
    }
    return { id, numPages, pages };
  } finally {
    pdf.close();
  }
}
