import { describe, expect, it, vi } from 'vitest';
import { createOcrEngine, createPdfWorkers } from '../../src/retrieval/ingest/index.ts';
import { ingestFixture, scannedPdf, type Fixture } from '../support/fixtures.ts';
import { writePdf } from '../support/pdf-writer.ts';

// What a running service holds once documents stop coming: the OCR engine and the PDF workers stop after their idle
// time (SVC_RAG_EXTRACT_IDLE_SECONDS), and the next document is read to the same text by new ones. A short PDF takes
// one PDF worker, a long one or PDFs sent at once take more, and each is read as the main thread reads it.

const ledger = (name: string, pages: number): Fixture => ({
  name,
  type: 'application/pdf',
  bytes: writePdf(
    Array.from({ length: pages }, (_, p) => ({ lines: Array.from({ length: 20 }, (_, l) => `${name} page ${p + 1} line ${l}`) })),
  ),
});

describe('extraction engines released when idle', () => {
  it('stops the OCR engine and the PDF workers after the idle time, and reads a scanned PDF to the same text after', async () => {
    const ocr = createOcrEngine({ langs: ['eng', 'fra'], idleMs: 300 });
    const pdfWorkers = createPdfWorkers(2, { idleMs: 300 });
    try {
      const first = await ingestFixture(scannedPdf(), { ocr, pdfWorkers });
      expect(first.ocrPages).toBe(1);
      const text = first.pages.map((p) => p.text).join('\n');
      expect(text.toLowerCase()).toContain('northwind');
      await vi.waitFor(
        () => {
          expect(ocr.started).toBe(false);
          expect(pdfWorkers.running).toBe(0);
        },
        { timeout: 30_000, interval: 100 },
      );
      expect(await ingestFixture(scannedPdf(), { ocr, pdfWorkers })).toEqual(first);
      expect(ocr.starts).toBe(2); // released, then started again for the second scan
      expect(pdfWorkers.starts).toBe(2); // one worker for each read of the short scan
    } finally {
      await Promise.all([ocr.close(), pdfWorkers.close()]);
    }
  });

  it('reads a short PDF on one worker and a long one on more, each to the text the main thread reads', async () => {
    const ocr = createOcrEngine({ langs: ['eng'] });
    const pdfWorkers = createPdfWorkers(3);
    try {
      const short = ledger('short.pdf', 3);
      const long = ledger('long.pdf', 40);
      expect(await ingestFixture(short, { ocr, pdfWorkers })).toEqual(await ingestFixture(short, { ocr }));
      expect(pdfWorkers.starts).toBe(1);
      expect(await ingestFixture(long, { ocr, pdfWorkers })).toEqual(await ingestFixture(long, { ocr }));
      expect(pdfWorkers.starts).toBe(3); // 40 pages: every worker
      expect(ocr.started).toBe(false);
    } finally {
      await Promise.all([ocr.close(), pdfWorkers.close()]);
    }
  });

  it('reads short PDFs sent at once on different workers, each whole and apart', async () => {
    const ocr = createOcrEngine({ langs: ['eng'] });
    const pdfWorkers = createPdfWorkers(2);
    try {
      const sent = [ledger('a.pdf', 5), ledger('b.pdf', 5)];
      const here = await Promise.all(sent.map((f) => ingestFixture(f, { ocr })));
      expect(await Promise.all(sent.map((f) => ingestFixture(f, { ocr, pdfWorkers })))).toEqual(here);
      expect(pdfWorkers.starts).toBe(2);
    } finally {
      await Promise.all([ocr.close(), pdfWorkers.close()]);
    }
  });
});
