import { describe, expect, it } from 'vitest';
import { detectFormat } from '../../src/retrieval/ingest/index.ts';
import { firstInvalidUtf8 } from '../../src/retrieval/ingest/magic.ts';
import { officeTypes } from '../support/fixtures.ts';

// Stage one of recognising an upload: its name, its declared type and its first bytes, read together.

const enc = (s: string) => new TextEncoder().encode(s);
const detect = (filename: string, head: Uint8Array, declaredType?: string, ocrEnabled = false) =>
  detectFormat({ filename, head, ocrEnabled, ...(declaredType ? { declaredType } : {}) });
const refusal = (filename: string, head: Uint8Array, declaredType?: string) => {
  try {
    detect(filename, head, declaredType);
  } catch (err) {
    return { name: (err as Error).name, message: (err as Error).message };
  }
  throw new Error(`${filename} was accepted`);
};
const ZIP = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0, 8, 0]);
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, ...enc('IHDR')]);

describe('detectFormat', () => {
  it.each([
    ['report.pdf', enc('%PDF-1.7\n'), undefined, 'pdf'],
    ['REPORT.PDF', enc('%PDF-1.4\n'), undefined, 'pdf'],
    ['scan', enc('%PDF-1.4\n'), 'application/octet-stream', 'pdf'],
    ['mailed.pdf', enc('From the mail gateway\r\n%PDF-1.4\n'), undefined, 'pdf'], // header within the first 1024 bytes
    ['minutes.docx', ZIP, undefined, 'docx'],
    ['deck.pptx', ZIP, undefined, 'pptx'],
    ['book.xlsx', ZIP, undefined, 'xlsx'],
    ['download', ZIP, officeTypes.xlsx, 'xlsx'],
    ['page.html', enc('<!doctype html><p>hi'), undefined, 'html'],
    ['page.htm', enc('<p>hi'), 'application/octet-stream', 'html'],
    ['notes.md', enc('# Notes'), undefined, 'markdown'],
    ['notes.markdown', enc('# Notes'), undefined, 'markdown'],
    ['notes.txt', enc('plain'), undefined, 'text'],
    ['data.csv', enc('a,b\n1,2'), 'application/vnd.ms-excel', 'text'],
    ['app.log', enc('INFO start'), undefined, 'text'],
    ['README', enc('Read me'), undefined, 'text'],
    ['export.dat', enc('<p>served as html</p>'), 'text/html', 'html'],
    ['export.dat', enc('# heading'), 'text/markdown; charset=utf-8', 'markdown'],
    ['export.dat', enc('anything'), 'text/x-anything', 'text'],
    ['MZ-report.txt', enc('MZ Corporation annual report'), undefined, 'text'], // "MZ" text is not an executable
    // extensions that name what every JavaScript object has are extensions like any other
    ['notes.constructor', enc('plain'), 'text/plain', 'text'],
    ['notes.__proto__', enc('plain'), 'text/plain', 'text'],
  ] as const)('%s (%s) is %s', (filename, head, declaredType, format) => {
    expect(detect(filename, head, declaredType).format).toBe(format);
  });

  it('accepts a UTF-8 character cut by the end of the 8 KiB head', () => {
    const head = enc(`${'a'.repeat(8190)}é`).subarray(0, 8191); // 'é' is two bytes: only the first is in the head
    expect(detect('notes.txt', head).format).toBe('text');
  });

  it('takes images only with OCR on, the kind from the bytes', () => {
    expect(detect('scan.png', PNG, 'image/png', true)).toEqual({ format: 'image', imageKind: 'png' });
    expect(detect('photo.jpg', PNG, 'image/jpeg', true)).toEqual({ format: 'image', imageKind: 'png' });
    expect(detect('page.tif', new Uint8Array([0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8]), undefined, true).imageKind).toBe('tiff');
    expect(refusal('scan.png', PNG, 'image/png')).toMatchObject({
      name: 'UnsupportedFormatError',
      message: expect.stringContaining('SVC_RAG_OCR_ENABLED'),
    });
  });

  it.each(
    [
      ['notes.docx', enc('not a zip'), 'MalformedDocumentError', /not an Office Open XML package/],
      ['scan.pdf', PNG, 'MalformedDocumentError', /holds a PNG image but its name says a PDF/],
      ['notes.txt', enc('%PDF-1.4\n'), 'MalformedDocumentError', /holds a PDF but its name says \.txt: rename/],
      ['photo.png', enc('just text'), 'MalformedDocumentError', /photo\.png is not a PNG image/],
      [
        'archive.tar',
        new Uint8Array([...enc('file.txt'), ...new Array(249).fill(0), ...enc('ustar')]),
        'UnsupportedFormatError',
        /tar archives/,
      ],
      ['logs.gz', new Uint8Array([0x1f, 0x8b, 8, 0]), 'UnsupportedFormatError', /gzip archives.*unpack/],
      ['letter.rtf', enc('{\\rtf1\\ansi hello}'), 'UnsupportedFormatError', /\.rtf files are not supported.*rename it to \.txt/],
      ['notes.md', new Uint8Array([...enc('caf'), 0xe9, ...enc(' au lait')]), 'UnsupportedFormatError', /byte 0xE9 at offset 3.*UTF-8/],
      [
        'wide.txt',
        new Uint8Array([...Buffer.from('Plain words in UTF-16 without a byte-order mark', 'utf16le')]),
        'UnsupportedFormatError',
        /UTF-16/,
      ],
      ['recording.wav', enc('renamed text'), 'UnsupportedFormatError', /WAV audio/],
      ['clip', enc('ID3 tag'), 'audio/mpeg', 'UnsupportedFormatError', /audio.*transcri/],
      [
        'talk.mp4',
        new Uint8Array([0, 0, 0, 0x18, ...enc('ftypmp42'), 0, 0, 0, 0, ...enc('mp42isom')]),
        'UnsupportedFormatError',
        /MP4\/QuickTime video.*transcri/,
      ],
      ['app.exe', enc('text named exe'), 'UnsupportedFormatError', /[Ee]xecutable/],
      ['lib.so', new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), 'UnsupportedFormatError', /[Ee]xecutable/],
      ['tool', new Uint8Array([0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1]), 'UnsupportedFormatError', /[Ee]xecutable/],
      [
        'pic.webp',
        new Uint8Array([...enc('RIFF'), 0, 0, 0, 0, ...enc('WEBPVP8 ')]),
        'UnsupportedFormatError',
        /WebP images.*PNG, JPEG or TIFF/,
      ],
      ['sheet.ods', ZIP, 'UnsupportedFormatError', /OpenDocument \.ods.*\.xlsx/],
      ['old.xls', enc('<table>an HTML table saved as .xls</table>'), 'UnsupportedFormatError', /Legacy Excel \.xls/],
      [
        'notes.constructor',
        enc('plain'),
        'application/octet-stream',
        'UnsupportedFormatError',
        /^\.constructor files are not supported: upload PDF/,
      ],
      ['notes.__proto__', ZIP, undefined, 'UnsupportedFormatError', /^Zip \(\.__proto__\) archives are not supported/],
    ].map((c) => (c.length === 4 ? [c[0], c[1], undefined, c[2], c[3]] : c)) as [string, Uint8Array, string | undefined, string, RegExp][],
  )('%s is refused', (filename, head, declaredType, name, message) => {
    expect(refusal(filename, head, declaredType)).toMatchObject({ name, message: expect.stringMatching(message) });
  });

  it('decodes a legacy HTML charset it is told about instead of refusing', () => {
    const head = new Uint8Array(Buffer.from('<meta charset="iso-8859-1"><p>caf\xe9</p>', 'latin1'));
    expect(detect('menu.html', head).format).toBe('html');
    expect(refusal('menu.txt', head)).toMatchObject({ message: expect.stringMatching(/not UTF-8/) });
  });
});

describe('firstInvalidUtf8', () => {
  it.each([
    [[0x61, 0x62], false, -1],
    [[0xc3, 0xa9], false, -1],
    [[0x61, 0xc3], false, 1],
    [[0x61, 0xc3], true, -1], // cut at the end of a head
    [[0xc0, 0x80], false, 0], // overlong NUL
    [[0xed, 0xa0, 0x80], false, 0], // a UTF-16 surrogate
    [[0xf4, 0x90, 0x80, 0x80], false, 0], // above U+10FFFF
    [[0xf0, 0x9f, 0x98, 0x80], false, -1], // an emoji
    [[0x61, 0xe2, 0x28, 0xa1], true, 1], // a continuation byte missing in the middle
  ])('%j (partial %s) -> %i', (bytes, partial, at) => {
    expect(firstInvalidUtf8(new Uint8Array(bytes), partial)).toBe(at);
  });
});
