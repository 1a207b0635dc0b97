import { extractText, getDocumentProxy, renderPageAsImage } from 'unpdf';
import { DocumentTooLargeError, MalformedDocumentError } from './errors.ts';
import type { OcrEngine } from './ocr.ts';
import type { Page } from './text.ts';

export const PDF_MAX_PAGES = 5000;

/** The text layer of every page; a page without one is rendered and OCR'd (only then does OCR start). */
export async function extractPdf(bytes: Uint8Array, ocr: OcrEngine): Promise<{ pages: Page[]; ocrPages: number }> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, stopAtErrors: true });
  } catch (err) {
    throw new MalformedDocumentError(`This PDF cannot be read: ${(err as Error).message}`);
  }
  try {
    if (pdf.numPages > PDF_MAX_PAGES) throw new DocumentTooLargeError(`This PDF has ${pdf.numPages} pages; the limit is ${PDF_MAX_PAGES}.`);
    let texts: string[];
    try {
      texts = (await extractText(pdf, { mergePages: false })).text;
    } catch (err) {
      throw new MalformedDocumentError(`The text of this PDF cannot be read: ${(err as Error).message}`);
    }
    const pages: Page[] = [];
    let ocrPages = 0;
    for (let i = 0; i < texts.length; i++) {
      let text = texts[i] ?? '';
      if (!text.trim()) {
        const image = await renderPageAsImage(pdf, i + 1, { canvasImport: () => import('@napi-rs/canvas'), scale: 2 });
        text = await ocr.recognize(new Uint8Array(image));
        ocrPages++;
      }
      pages.push({ page: i + 1, text });
    }
    return { pages, ocrPages };
  } finally {
    await pdf.destroy();
  }
}
