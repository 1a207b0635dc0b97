import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createOcrEngine } from '../../src/retrieval/ingest/index.ts';
import { acceptedFixtures, ingestFixture, officeTypes, rejectedFixtures, SENTENCES, type Fixture } from '../support/fixtures.ts';

// Every accepted format yields its known sentence on its page; every refused one raises the right error with a
// message a person can act on. The OCR engine is real and must never start for these files.

const ocr = createOcrEngine({ langs: ['eng', 'fra'] });
afterAll(() => ocr.close());

const accepted = await acceptedFixtures();
const rejected = await rejectedFixtures();
const byName = (name: string) => accepted.find((f) => f.name === name)!;
const textOf = async (f: Fixture) => (await ingestFixture(f, { ocr })).pages.map((p) => p.text).join('\n');

describe('extraction of accepted formats', () => {
  it.each(accepted.map((f) => [f.name, f] as const))('%s: the known sentence is on its page', async (_, f) => {
    const out = await ingestFixture(f, { ocr });
    const pages = out.pages.filter((p) => p.text.includes(f.sentence!)).map((p) => p.page);
    expect(pages).toEqual([f.page]);
    expect(out.pages.map((p) => p.page)).toEqual(out.pages.map((_, i) => i + 1));
    expect(out.ocrPages).toBe(0);
  });

  it('never starts OCR for digital documents, a PDF with a blank page included', () => {
    expect(ocr.started).toBe(false);
  });

  it('keeps table rows as rows of cells joined by " | "', async () => {
    expect(await textOf(byName('minutes.docx'))).toContain('Fruit | Tonnes\nPears | 12');
    expect(await textOf(byName('survey.pptx'))).toContain(`${SENTENCES.pptx}\nZone | Depth\nA | 40 m`);
    expect(await textOf(byName('harvest.xlsx'))).toContain(`Yield\n${SENTENCES.xlsx} | 42.5\nTotal | 99`);
  });

  it('reads XLSX inline strings, booleans and prefixed SpreadsheetML, sheets in tab order', async () => {
    const out = await ingestFixture(byName('apiary.xlsx'), { ocr });
    expect(out.pages).toHaveLength(2);
    expect(out.pages[0]!.text.startsWith('Sites\nSite | Open\nNorth | TRUE\nA0 | FALSE\n')).toBe(true);
    expect(out.pages[1]).toEqual({ page: 2, text: `Counts\n${SENTENCES.inlineXlsx} | 17\nTotal | 17` });
  });

  it('numbers PPTX slides in presentation order, not by part name', async () => {
    const out = await ingestFixture(byName('ferries.pptx'), { ocr });
    expect(out.pages.map((p) => p.text.split(' ')[0])).toEqual(['harbour0', SENTENCES.reorderedPptx.split(' ')[0]]);
    expect(out.pages[1]).toEqual({ page: 2, text: `${SENTENCES.reorderedPptx}\nCheck the harbour board before each crossing` });
  });

  it('strips HTML tags, drops scripts and styles, keeps the title and decodes a declared legacy charset', async () => {
    const soil = await textOf(byName('soil.html'));
    expect(soil).not.toMatch(/secretScriptWord|color:red|<\w/);
    expect(soil.split('\n')).toEqual(['Soil survey notes', 'Soil notes', `${SENTENCES.html}.`, 'plot | grape']);
    expect(await textOf(byName('menu.htm'))).toContain('The café terrace opens at noon');
  });

  it('decodes entities and separates block elements', async () => {
    const html =
      '<p>Fish &amp; chips &lt;3&nbsp;today</p><div>one<br>two</div><ul><li>a</li><li>b</li></ul><template>hidden</template><noscript>nojs</noscript>';
    const text = await textOf({ name: 'menu.html', type: 'text/html', bytes: new TextEncoder().encode(html) });
    expect(text.split('\n')).toEqual(['Fish & chips <3 today', 'one', 'two', 'a', 'b']);
  });

  it('reads text as UTF-8, byte-order mark dropped, as one page', async () => {
    const out = await ingestFixture(byName('cable.txt'), { ocr });
    expect(out.pages).toHaveLength(1);
    expect(out.pages[0]!.text.startsWith(SENTENCES.text)).toBe(true);
    const md = await ingestFixture(byName('birds.md'), { ocr });
    expect(md.format).toBe('markdown');
    expect(md.pages[0]!.text).toContain(`# Birds\n\n${SENTENCES.markdown}.`);
  });

  it('accepts any text/* type best effort, invalid bytes replaced', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('Readme for the harbour '), 0xe9, ...new TextEncoder().encode(' tools')]);
    const out = await ingestFixture({ name: 'README.harbour', type: 'text/x-readme', bytes }, { ocr });
    expect(out).toMatchObject({ format: 'text', pages: [{ page: 1, text: 'Readme for the harbour \uFFFD tools' }] });
  });

  it.each([
    ['minutes.docx', officeTypes.docx, SENTENCES.docx, 1],
    ['survey.pptx', officeTypes.pptx, SENTENCES.pptx, 2],
    ['harvest.xlsx', officeTypes.xlsx, SENTENCES.xlsx, 2],
  ] as const)('reads %s as saved by LibreOffice (a real producer)', async (name, type, sentence, page) => {
    const bytes = new Uint8Array(readFileSync(new URL(`../fixtures/libreoffice/${name}`, import.meta.url)));
    const out = await ingestFixture({ name, type, bytes }, { ocr });
    expect(out.pages.filter((p) => p.text.includes(sentence)).map((p) => p.page)).toEqual([page]);
  });
});

describe('refused files', () => {
  it.each(rejected.map((r) => [r.fixture.name, r] as const))('%s', async (_, { fixture, says, error }) => {
    const failure = await ingestFixture(fixture, { ocr }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure, `${fixture.name} must be refused`).toBeInstanceOf(Error);
    expect(failure!.name).toBe(error);
    expect(failure!.message).toMatch(says);
    // a message a person can act on: what is wrong, a colon, then what to do
    expect(failure!.message).toMatch(/: .*\b(save|upload|rename|remove|convert|unpack|transcribe|export|ask)\b/i);
  });

  it('never starts OCR while refusing', () => {
    expect(ocr.started).toBe(false);
  });
});
