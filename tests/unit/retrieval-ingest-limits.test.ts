import JSZip from 'jszip';
import { afterAll, describe, expect, it } from 'vitest';
import { createOcrEngine, type OcrEngine } from '../../src/retrieval/ingest/index.ts';
import { deadline } from '../../src/retrieval/ingest/limits.ts';
import { xmlReader } from '../../src/retrieval/ingest/xml.ts';
import { declaredEntryCount } from '../../src/retrieval/ingest/zip.ts';
import { docx, pack, xlsx } from '../fixtures/ooxml.ts';
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
    await expect(ingestFixture(bomb, { ocr })).rejects.toMatchObject(
      tooLarge(/bomb\.docx inflates to more than 16 MiB from a 0\.1 MiB file.*zip bomb.*split it/),
    );
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
    await expect(
      ingestFixture({ name: 'many.docx', type: officeTypes.docx, bytes }, { ocr, limits: { maxZipEntries: 10 } }),
    ).rejects.toMatchObject(tooLarge(/many\.docx holds 30 parts; the limit is 10/));
  });
});

describe('PDF', () => {
  it('refuses a PDF with more pages than the limit', async () => {
    const f = { name: 'report.pdf', type: 'application/pdf', bytes: reportPdf().bytes };
    await expect(ingestFixture(f, { ocr, limits: { maxPdfPages: 2 } })).rejects.toMatchObject(
      tooLarge(/report\.pdf has 3 pages; the limit is 2\. Split it/),
    );
  });

  it('refuses a PDF needing OCR on more pages than the limit, before starting OCR', async () => {
    const engine = createOcrEngine({ langs: ['eng'] });
    await expect(ingestFixture(scannedPdf(), { ocr: engine, limits: { maxOcrPages: 0 } })).rejects.toMatchObject(
      tooLarge(/needs OCR on more than 0 pages/),
    );
    expect(engine.started).toBe(false);
  });
});

describe('time limit', () => {
  it('stops an extraction that runs past the limit', async () => {
    const f = { name: 'report.pdf', type: 'application/pdf', bytes: reportPdf().bytes };
    await expect(ingestFixture(f, { ocr, limits: { timeoutMs: 1 } })).rejects.toMatchObject(
      tooLarge(/report\.pdf took longer than the 1 ms limit/),
    );
  });

  it('answers on time even when one step never returns', async () => {
    let asked = 0;
    const stuck: OcrEngine = {
      started: true,
      starts: 1,
      recognize: () => {
        asked++;
        return new Promise<string>(() => {});
      },
      close: async () => {},
    };
    const started = Date.now();
    await expect(ingestFixture(scannedPdf(), { ocr: stuck, limits: { timeoutMs: 1500 } })).rejects.toMatchObject(
      tooLarge(/took longer than the 2 s limit/),
    );
    expect(asked).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('Office XML and HTML', () => {
  const unprocessable = (message: RegExp) => ({ name: 'UnprocessableDocumentError', message: expect.stringMatching(message) });
  const withPart = async (bytes: Uint8Array, part: string, body: string) => {
    const zip = await JSZip.loadAsync(bytes);
    zip.file(part, body);
    return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
  };
  const sheet = (rows: string) =>
    `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}</sheetData></worksheet>`;
  const book = async (rows: string) => ({
    name: 'book.xlsx',
    type: officeTypes.xlsx,
    bytes: await withPart(await xlsx([{ name: 'S', rows: [['a']] }]), 'xl/worksheets/sheet1.xml', sheet(rows)),
  });

  it('refuses elements nested deeper than the limit, naming the part and the limit', async () => {
    await expect(ingestFixture(await book('<row>'.repeat(600)), { ocr })).rejects.toMatchObject(
      unprocessable(/book\.xlsx nests XML elements more than 512 deep in xl\/worksheets\/sheet1\.xml/),
    );
    const html = { name: 'deep.html', type: 'text/html', bytes: new TextEncoder().encode('<div>'.repeat(40)) };
    await expect(ingestFixture(html, { ocr, limits: { maxDepth: 30 } })).rejects.toMatchObject(
      unprocessable(/deep\.html nests HTML elements more than 30 deep/),
    );
  });

  it('counts the elements of all parts of a package together', async () => {
    const rows = '<row r="1"><c r="A1" t="inlineStr"><is><t>x</t></is></c></row>'.repeat(200);
    const f = await book(rows);
    expect((await ingestFixture(f, { ocr })).pages[0]!.text.split('\n')).toHaveLength(201);
    await expect(ingestFixture(f, { ocr, limits: { maxElements: 800 } })).rejects.toMatchObject(
      tooLarge(/book\.xlsx holds more than 800 XML elements/),
    );
    const html = { name: 'many.html', type: 'text/html', bytes: new TextEncoder().encode('<p>x</p>'.repeat(100)) };
    await expect(ingestFixture(html, { ocr, limits: { maxElements: 50 } })).rejects.toMatchObject(
      tooLarge(/many\.html holds more than 50 HTML elements/),
    );
  });

  it('refuses a sheet that repeats a long shared string past the text limit, before joining it', async () => {
    const long = 'w'.repeat(10_000);
    const f = await book('<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row>');
    const zip = await JSZip.loadAsync(f.bytes);
    zip.file(
      'xl/sharedStrings.xml',
      `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>${long}</t></si></sst>`,
    );
    zip.file('xl/worksheets/sheet1.xml', sheet(`<row r="1">${'<c t="s"><v>0</v></c>'.repeat(1000)}</row>`));
    const bytes = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
    await expect(ingestFixture({ ...f, bytes }, { ocr, limits: { maxTextChars: 1_000_000 } })).rejects.toMatchObject(
      tooLarge(/book\.xlsx yields more than 1000000 characters of text/),
    );
  });

  it.each([
    ['an unclosed element', '<row r="1"><c><v>1</v></c>', /<\/sheetData> closing <row>/],
    ['a mismatched end tag', '<row><c></row>', /<\/row> closing <c>/],
    ['an unterminated attribute', '<row r="1><c/></row>', /attribute value that never ends/],
  ])('refuses %s as a damaged part (400)', async (_, rows, says) => {
    await expect(ingestFixture(await book(rows), { ocr })).rejects.toMatchObject({
      name: 'MalformedDocumentError',
      message: expect.stringMatching(says),
    });
  });

  it('refuses a part that declares a DTD', async () => {
    const f = {
      name: 'dtd.xlsx',
      type: officeTypes.xlsx,
      bytes: await withPart(
        await xlsx([{ name: 'S', rows: [['a']] }]),
        'xl/worksheets/sheet1.xml',
        `<!DOCTYPE x [<!ENTITY a "aaaa">]>${sheet('<row><c t="inlineStr"><is><t>&a;</t></is></c></row>')}`,
      ),
    };
    await expect(ingestFixture(f, { ocr })).rejects.toMatchObject({
      name: 'MalformedDocumentError',
      message: expect.stringMatching(/declares a document type \(DTD\)/),
    });
  });

  it('decodes entities, CDATA and skips comments and processing instructions', async () => {
    const rows =
      '<?mso x?><!-- a comment with <row> inside --><row><c t="inlineStr"><is><t>Fish &amp; chips &#x263A; &#9731; &bogus; &constructor; &__proto__; &lt;ok&gt;</t></is></c><c t="inlineStr"><is><t><![CDATA[<raw> & text]]></t></is></c></row>';
    expect((await ingestFixture(await book(rows), { ocr })).pages[0]!.text).toBe(
      'S\nFish & chips ☺ ☃ &bogus; &constructor; &__proto__; <ok> | <raw> & text',
    );
  });

  it('checks the deadline while it scans, so a long part stops at the limit', async () => {
    let now = 0;
    const clock = () => now;
    const until = deadline('long.xlsx', 1000, clock);
    const reader = xmlReader({ filename: 'long.xlsx', limits: { maxElements: 10_000_000, maxDepth: 512 }, deadline: until });
    let rows = 0;
    const xml = sheet('<row r="1"/>'.repeat(100_000));
    const scanning = reader.scan(xml, 'xl/worksheets/sheet1.xml', {
      open: (t) => {
        // time passes as rows are read: past the limit a third of the way in
        if (t.local === 'row' && ++rows === 30_000) now = 2000;
      },
    });
    await expect(scanning).rejects.toMatchObject(tooLarge(/long\.xlsx took longer than the 1 s limit/));
    expect(rows).toBeLessThan(40_000);
  });
});
