import { afterAll, describe, expect, it } from 'vitest';
import { createOcrEngine, type OcrEngine } from '../../src/retrieval/ingest/index.ts';
import { declaredEntryCount } from '../../src/retrieval/ingest/zip.ts';
import { docx, pack } from '../fixtures/ooxml.ts';
import { ingestFixture, officeTypes, reportPdf, scannedPdf, zipBombDocx } from '../support/fixtures.ts';

// The bounds on the work one upload may cause: each is refused with DocumentTooLargeError (413) and a message
// saying what to do, never a crash, a hang or an unbounded inflation.

const ocr = createOcrEngine({ langs: ['eng'] });
afterAll(() => ocr.close());

const tooLarge = (message: RegExp) => ({ name: 'DocumentTooLargeError', message: expect.stringMatching(message) });

describe('Office packages', () => {
  it('refuses a zip bomb quickly, counting what is inflated rather than what the archive declares', async () => {
    // 64 MiB of zeros in about 64 KiB, its headers claiming 2 KiB
    const bomb = { name: 'bomb.docx', type: officeTypes.docx, bytes: await zipBombDocx(64 * 1024 * 1024, 2048) };
    expect(bomb.bytes.length).toBeLessThan(100_000);
    const started = Date.now();
    await expect(ingestFixture(bomb, { ocr })).rejects.toMatchObject(tooLarge(/bomb\.docx inflates to more than 16 MiB from a 0\.1 MiB file.*zip bomb.*split it/));
    // a generous bound that only a hang or an unbounded inflation would miss
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('caps the inflated bytes of a genuine package at the configured limit', async () => {
    const big = await docx(Array.from({ length: 2000 }, (_, i) => ({ paragraph: `Paragraph ${i} of the long minutes` })));
    const f = { name: 'long.docx', type: officeTypes.docx, bytes: big };
    expect((await ingestFixture(f, { ocr })).pages[0]!.text).toContain('Paragraph 1999 of the long minutes');
    await expect(ingestFixture(f, { ocr, limits: { maxInflatedBytes: 20_000 } })).rejects.toMatchObject(tooLarge(/inflates to more than/));
  });

  it('refuses a package with too many parts before reading them', async () => {
    const parts = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`word/media/part${i}.xml`, '<x/>']));
    const bytes = await pack(parts);
    expect(declaredEntryCount(bytes)).toBe(30);
    await expect(ingestFixture({ name: 'many.docx', type: officeTypes.docx, bytes }, { ocr, limits: { maxZipEntries: 10 } })).rejects.toMatchObject(
      tooLarge(/many\.docx holds 30 parts; the limit is 10/),
    );
  });
});

describe('PDF', () => {
  it('refuses a PDF with more pages than the limit', async () => {
    const f = { name: 'report.pdf', type: 'application/pdf', bytes: reportPdf().bytes };
    await expect(ingestFixture(f, { ocr, limits: { maxPdfPages: 2 } })).rejects.toMatchObject(tooLarge(/report\.pdf has 3 pages; the limit is 2\. Split it/));
  });

  it('refuses a PDF needing OCR on more pages than the limit, before starting OCR', async () => {
    const engine = createOcrEngine({ langs: ['eng'] });
    await expect(ingestFixture(scannedPdf(), { ocr: engine, limits: { maxOcrPages: 0 } })).rejects.toMatchObject(tooLarge(/needs OCR on more than 0 pages/));
    expect(engine.started).toBe(false);
  });
});

describe('time limit', () => {
  it('stops an extraction that runs past the limit', async () => {
    const f = { name: 'report.pdf', type: 'application/pdf', bytes: reportPdf().bytes };
    await expect(ingestFixture(f, { ocr, limits: { timeoutMs: 1 } })).rejects.toMatchObject(tooLarge(/report\.pdf took longer than the 1 ms limit/));
  });

  it('answers on time even when one step never returns', async () => {
    let asked = 0;
    const stuck: OcrEngine = {
      started: true,
      recognize: () => {
        asked++;
        return new Promise<string>(() => {});
      },
      close: async () => {},
    };
    const started = Date.now();
    await expect(ingestFixture(scannedPdf(), { ocr: stuck, limits: { timeoutMs: 1500 } })).rejects.toMatchObject(tooLarge(/took longer than the 2 s limit/));
    expect(asked).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
