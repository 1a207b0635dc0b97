import { afterAll, describe, expect, it, vi } from 'vitest';
import { createOcrEngine, detectFormat } from '../../src/retrieval/ingest/index.ts';
import { hugePngHeader, scanPngBytes } from '../fixtures/images.ts';
import { imageFixtures, ingestFixture, reportPdf, scannedPdf, type Fixture } from '../support/fixtures.ts';

// OCR with the real tesseract.js engine, offline, English and French: scanned PDF pages on demand, images only
// when OCR is on. OCR output may differ by a character, so the checks look for a few key words.

const ocr = createOcrEngine({ langs: ['eng', 'fra'] });
afterAll(() => ocr.close());

const words = (text: string) => text.toLowerCase();
const KEY_WORDS = ['quarterly', 'revenue', 'northwind', 'twelve', 'percent'];
const FRENCH_WORDS = ['chiffre', 'affaires', 'augmenté', 'douze'];

describe('OCR engine', () => {
  it('starts lazily, on the first page that needs it, and stops on close', async () => {
    const engine = createOcrEngine({ langs: ['eng'] });
    expect(engine.started).toBe(false);
    await ingestFixture({ name: 'report.pdf', type: 'application/pdf', bytes: reportPdf().bytes }, { ocr: engine });
    expect(engine.started).toBe(false);
    const text = await engine.recognize(scanPngBytes());
    expect(engine.started).toBe(true);
    expect(words(text)).toContain('northwind');
    await engine.close();
    expect(engine.started).toBe(false);
    // a closed engine starts again when asked
    expect(words(await engine.recognize(scanPngBytes()))).toContain('twelve');
    await engine.close();
  });

  it('stops once no page has needed it for its idle time, and starts again for the next page', async () => {
    const engine = createOcrEngine({ langs: ['eng'], idleMs: 200 });
    try {
      expect(words(await engine.recognize(scanPngBytes()))).toContain('northwind');
      expect(engine.starts).toBe(1);
      await vi.waitFor(() => expect(engine.started).toBe(false), { timeout: 30_000, interval: 100 });
      expect(words(await engine.recognize(scanPngBytes()))).toContain('northwind');
      expect(engine.starts).toBe(2); // stopped when idle, and started again for the next page
    } finally {
      await engine.close();
    }
  });

  it('reads pages one at a time when asked concurrently', async () => {
    const results = await Promise.all([1, 2, 3].map(() => ocr.recognize(scanPngBytes())));
    for (const text of results) expect(words(text)).toContain('quarterly');
  });

  it('refuses a truncated image before OCR', async () => {
    const engine = createOcrEngine({ langs: ['eng'] });
    const cut = { name: 'cut.png', type: 'image/png', bytes: scanPngBytes().slice(0, 4000) };
    await expect(ingestFixture(cut, { ocr: engine, ocrEnabled: true })).rejects.toMatchObject({
      name: 'MalformedDocumentError',
      message: expect.stringMatching(/cut\.png is a truncated PNG image.*upload the complete file/),
    });
    expect(engine.started).toBe(false);
  });

  it('refuses an image it cannot decode without bringing the process down, then keeps working', async () => {
    const damaged = scanPngBytes();
    damaged.fill(0xff, 2000, 6000); // inside the pixel data: header and end marker intact
    await expect(
      ingestFixture({ name: 'damaged.png', type: 'image/png', bytes: damaged }, { ocr, ocrEnabled: true }),
    ).rejects.toMatchObject({
      name: 'MalformedDocumentError',
      message: expect.stringMatching(/damaged\.png is a damaged image.*export it again/),
    });
    expect(words(await ocr.recognize(scanPngBytes()))).toContain('revenue');
  });
});

describe('scanned PDF', () => {
  it('OCRs the page without a text layer and reads the text layer of the others', async () => {
    const f = scannedPdf();
    const out = await ingestFixture(f, { ocr });
    expect(out.ocrPages).toBe(1);
    expect(out.pages.map((p) => p.page)).toEqual([1, 2]);
    expect(out.pages[0]!.text).toBe('Cover page of the scanned report: digital text.');
    for (const w of [...KEY_WORDS, ...FRENCH_WORDS]) expect(words(out.pages[1]!.text)).toContain(w);
  });

  it('OCRs scanned pages whatever SVC_RAG_OCR_ENABLED says (it gates image files only)', async () => {
    const out = await ingestFixture(scannedPdf(), { ocr, ocrEnabled: false });
    expect(out.ocrPages).toBe(1);
  });
});

const images = await imageFixtures();

describe('images', () => {
  it.each(images.map((f) => [f.name, f] as const))("%s is OCR'd as page 1 when OCR is on", async (_, f: Fixture) => {
    const out = await ingestFixture(f, { ocr, ocrEnabled: true });
    expect(out.format).toBe('image');
    expect(out.ocrPages).toBe(1);
    expect(out.pages).toHaveLength(1);
    expect(out.pages[0]!.page).toBe(1);
    for (const w of KEY_WORDS) expect(words(out.pages[0]!.text)).toContain(w);
  });

  it.each(images.map((f) => [f.name, f] as const))('%s is refused when OCR is off, naming the setting', (_, f: Fixture) => {
    expect(() => detectFormat({ filename: f.name, declaredType: f.type, head: f.bytes.subarray(0, 8192), ocrEnabled: false })).toThrow(
      expect.objectContaining({ name: 'UnsupportedFormatError', message: expect.stringContaining('SVC_RAG_OCR_ENABLED=true') }),
    );
  });

  it('tells the image kind', () => {
    const kinds = images.map((f) => detectFormat({ filename: f.name, head: f.bytes.subarray(0, 8192), ocrEnabled: true }).imageKind);
    expect(kinds).toEqual(['png', 'jpeg', 'tiff']);
  });

  it('refuses an image that declares more pixels than OCR may decode, before decoding it', async () => {
    const engine = createOcrEngine({ langs: ['eng'] });
    const bomb = { name: 'poster.png', type: 'image/png', bytes: hugePngHeader(100_000, 100_000) };
    await expect(ingestFixture(bomb, { ocr: engine, ocrEnabled: true })).rejects.toMatchObject({
      name: 'DocumentTooLargeError',
      message: expect.stringMatching(/100000×100000 pixels.*scale the image down/),
    });
    expect(engine.started).toBe(false);
  });
});
