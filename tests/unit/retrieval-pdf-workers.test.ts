import { afterAll, describe, expect, it, vi } from 'vitest';
import { createOcrEngine, createPdfWorkers } from '../../src/retrieval/ingest/index.ts';
import { acceptedFixtures, ingestFixture, rejectedFixtures, reportPdf, scannedPdf, type Fixture } from '../support/fixtures.ts';
import { writePdf } from '../support/pdf-writer.ts';

// PDF text read on worker threads (SVC_RAG_PDF_WORKERS, the service's default) is the text read on the thread that
// answers requests: the same pages, the same refusals with the same messages, OCR of the same pages. Each case runs
// both ways, with two and three workers so a document's pages are split unevenly.

const ocr = createOcrEngine({ langs: ['eng', 'fra'] });
const two = createPdfWorkers(2);
const three = createPdfWorkers(3);
afterAll(async () => {
  await Promise.all([ocr.close(), two.close(), three.close()]);
});

const pdf = (f: Fixture) => f.name.endsWith('.pdf');
const longPdf = (pages: number) =>
  writePdf(
    Array.from({ length: pages }, (_, p) => ({ lines: Array.from({ length: 30 }, (_, l) => `page ${p + 1} line ${l} of the ledger`) })),
  );

/** What an extraction gives, or how it is refused, in a form two runs can be compared by. */
const outcome = (run: Promise<unknown>): Promise<{ out?: unknown; refused?: { name: string; message: string } }> =>
  run.then(
    (out) => ({ out }),
    (err: Error) => ({ refused: { name: err.name, message: err.message } }),
  );

describe('PDF text on worker threads', () => {
  const documents: Fixture[] = [
    { name: 'ledger.pdf', type: 'application/pdf', bytes: longPdf(23) },
    { name: 'single.pdf', type: 'application/pdf', bytes: longPdf(1) },
  ];

  it('reads every page of every PDF as this thread does, in page order', async () => {
    const all = [...(await acceptedFixtures()).filter(pdf), ...documents];
    expect(all.length).toBeGreaterThanOrEqual(4); // the accepted PDFs, one with a blank page, and the two above
    for (const f of all) {
      const here = await ingestFixture(f, { ocr });
      expect(here.pages.length).toBeGreaterThan(0);
      expect(await ingestFixture(f, { ocr, pdfWorkers: two }), f.name).toEqual(here);
      expect(await ingestFixture(f, { ocr, pdfWorkers: three }), f.name).toEqual(here);
    }
    expect(ocr.started).toBe(false);
  });

  it('stops its workers once no PDF has come for their idle time, and reads the next PDF as before', async () => {
    const idle = createPdfWorkers(2, { idleMs: 200 });
    try {
      const f = documents[0]!;
      expect(idle.running).toBe(0);
      const first = await ingestFixture(f, { ocr, pdfWorkers: idle });
      expect(idle.starts).toBe(2);
      await vi.waitFor(() => expect(idle.running).toBe(0), { timeout: 30_000, interval: 100 });
      expect(await ingestFixture(f, { ocr, pdfWorkers: idle })).toEqual(first);
      expect(idle.starts).toBe(4); // the two stopped, and two new ones read the next PDF
      expect(first).toEqual(await ingestFixture(f, { ocr }));
    } finally {
      await idle.close();
    }
  });

  it('has a worker with nothing to read join a ten-page PDF read alone on a machine with room (started by the first, reading from the second)', async () => {
    const workers = createPdfWorkers(2, { room: () => true });
    try {
      const f = { name: 'ten.pdf', type: 'application/pdf', bytes: longPdf(10) };
      const here = await ingestFixture(f, { ocr });
      expect(await ingestFixture(f, { ocr, pdfWorkers: workers })).toEqual(here);
      // the second worker was started for the documents to come, not for this one
      expect(workers.starts).toBe(2);
      for (let i = 0; i < 5; i++) expect(await ingestFixture(f, { ocr, pdfWorkers: workers })).toEqual(here);
      expect(workers.starts).toBe(2);
      // a one-page PDF is not worth a second worker, and on a crowded machine nor is a ten-page one: one worker started
      const single = createPdfWorkers(2, { room: () => true });
      const busy = createPdfWorkers(2, { room: () => false });
      try {
        await ingestFixture(documents[1]!, { ocr, pdfWorkers: single });
        expect(single.starts).toBe(1);
        for (let i = 0; i < 2; i++) expect(await ingestFixture(f, { ocr, pdfWorkers: busy })).toEqual(here);
        expect(busy.starts).toBe(1);
      } finally {
        await Promise.all([single.close(), busy.close()]);
      }
    } finally {
      await workers.close();
    }
  });

  it('reads documents sent at once each whole and apart: every page once, none from another document', async () => {
    const sent = [17, 1, 9, 30].map((pages, i) => ({ name: `at-once-${i}.pdf`, type: 'application/pdf', bytes: longPdf(pages) }));
    const here = await Promise.all(sent.map((f) => ingestFixture(f, { ocr })));
    expect(await Promise.all(sent.map((f) => ingestFixture(f, { ocr, pdfWorkers: two })))).toEqual(here);
    expect(await Promise.all(sent.map((f) => ingestFixture(f, { ocr, pdfWorkers: three })))).toEqual(here);
  });

  it('refuses a damaged or truncated PDF with the same message', async () => {
    const damaged = (await rejectedFixtures()).map((r) => r.fixture).filter(pdf);
    expect(damaged.length).toBeGreaterThanOrEqual(3);
    for (const f of damaged) {
      const here = await outcome(ingestFixture(f, { ocr }));
      expect(here.refused, f.name).toBeDefined();
      expect(await outcome(ingestFixture(f, { ocr, pdfWorkers: two })), f.name).toEqual(here);
    }
  });

  it('refuses a PDF with more pages than the limit, and one needing OCR on more pages than allowed, before OCR starts', async () => {
    const report: Fixture = { name: 'report.pdf', type: 'application/pdf', bytes: reportPdf().bytes };
    const pages = { maxPdfPages: 2 };
    const here = await outcome(ingestFixture(report, { ocr, limits: pages }));
    expect(here.refused?.message).toMatch(/report\.pdf has 3 pages; the limit is 2/);
    expect(await outcome(ingestFixture(report, { ocr, limits: pages, pdfWorkers: three }))).toEqual(here);

    const engine = createOcrEngine({ langs: ['eng'] });
    const scans = await outcome(ingestFixture(scannedPdf(), { ocr: engine, limits: { maxOcrPages: 0 }, pdfWorkers: two }));
    expect(scans.refused?.message).toMatch(/needs OCR on more than 0 pages/);
    expect(engine.started).toBe(false);
  });

  it("OCRs a scanned page and reads the others' text layer as this thread does", async () => {
    const here = await ingestFixture(scannedPdf(), { ocr });
    expect(here.ocrPages).toBe(1);
    expect(await ingestFixture(scannedPdf(), { ocr, pdfWorkers: two })).toEqual(here);
  });

  it('stops reading when the upload no longer wants the text, and the workers read the next document', async () => {
    const abandon = new AbortController();
    const reading = ingestFixture(
      { name: 'long.pdf', type: 'application/pdf', bytes: longPdf(400) },
      { ocr, pdfWorkers: two, signal: abandon.signal },
    );
    setTimeout(() => abandon.abort(new Error('a duplicate: the text is not wanted')), 20);
    await expect(reading).rejects.toThrow('a duplicate: the text is not wanted');
    // the workers themselves stop between pages rather than read the remaining ones
    const cancel = new AbortController();
    const read = two.read(longPdf(400), { maxPages: 5000, signal: cancel.signal });
    cancel.abort(); // after the read was sent: the cancel follows it to each worker
    expect(await read).toEqual({ numPages: 400, failure: { kind: 'cancelled' } });
    const next = await ingestFixture(documents[0]!, { ocr, pdfWorkers: two });
    expect(next.pages).toHaveLength(23);
  });

  it('fails a read whose worker stops, and starts new workers for the next document', async () => {
    const workers = createPdfWorkers(2);
    const reading = workers.read(longPdf(400), { maxPages: 5000 });
    const failed = expect(reading).rejects.toThrow(/a PDF worker stopped/);
    await workers.close();
    await failed;
    const next = await ingestFixture(documents[0]!, { ocr, pdfWorkers: workers });
    expect(next.pages.map((p) => p.page)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    await workers.close();
  });
});
