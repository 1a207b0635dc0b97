import { UnsupportedFormatError } from './errors.ts';

// The format is decided from the file's first bytes and its extension together: a name never overrides what the
// bytes say, and bytes that fit no accepted format are refused with what to do instead.
export type Format = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'html' | 'markdown' | 'text' | 'image';
export type Detected = { format: Format; imageKind?: 'png' | 'jpeg' | 'tiff' };

const starts = (head: Uint8Array, ...bytes: number[]) => bytes.every((b, i) => head[i] === b);
const ascii = (head: Uint8Array, at: number, text: string) =>
  [...text].every((ch, i) => head[at + i] === ch.charCodeAt(0));

const LEGACY: Record<string, string> = {
  doc: 'Legacy Word .doc files are not supported: save the document as .docx or PDF and upload it again.',
  xls: 'Legacy Excel .xls files are not supported: save the workbook as .xlsx and upload it again.',
  ppt: 'Legacy PowerPoint .ppt files are not supported: save the presentation as .pptx or PDF and upload it again.',
};
const AUDIO = new Set(['wav', 'mp3', 'ogg', 'flac', 'm4a', 'aac', 'opus', 'wma']);
const TEXT_EXTENSIONS: Record<string, Format> = {
  md: 'markdown', markdown: 'markdown', txt: 'text', log: 'text', csv: 'text', tsv: 'text', json: 'text',
  html: 'html', htm: 'html',
};
const OOXML: Record<string, Format> = { docx: 'docx', pptx: 'pptx', xlsx: 'xlsx' };

export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot > 0 ? filename.slice(dot + 1).toLowerCase() : '';
}

export function detectFormat(input: { filename: string; declaredType?: string; head: Uint8Array; ocrEnabled: boolean }): Detected {
  const { head } = input;
  const ext = extensionOf(input.filename);
  const declared = (input.declaredType ?? '').toLowerCase().split(';')[0]!.trim();

  if (starts(head, 0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1)) {
    throw new UnsupportedFormatError(LEGACY[ext] ?? 'Legacy Office (OLE2) files are not supported: save the file in a current Office format (.docx, .xlsx, .pptx) or as PDF.');
  }
  if (LEGACY[ext]) throw new UnsupportedFormatError(LEGACY[ext]);
  if (isAudio(head) || AUDIO.has(ext) || declared.startsWith('audio/')) {
    throw new UnsupportedFormatError('Audio files are not supported: there is no transcription. Transcribe the audio elsewhere and upload the text.');
  }
  if (starts(head, 0x7f, 0x45, 0x4c, 0x46) || starts(head, 0x4d, 0x5a)) {
    throw new UnsupportedFormatError('Executable files are not supported: upload a document (PDF, DOCX, PPTX, XLSX, HTML, Markdown or text).');
  }
  if (ascii(head, 0, '%PDF-')) {
    if (ext !== 'pdf' && ext !== '') throw mismatch(input.filename, 'a PDF');
    return { format: 'pdf' };
  }
  if (starts(head, 0x50, 0x4b, 0x03, 0x04) || starts(head, 0x50, 0x4b, 0x05, 0x06)) {
    // Which OOXML package it is, is checked on its content during extraction.
    const format = OOXML[ext];
    if (!format) throw new UnsupportedFormatError(`Zip archives${ext ? ` (.${ext})` : ''} are not supported: unpack the archive and upload the documents one by one.`);
    return { format };
  }
  if (OOXML[ext]) throw new UnsupportedFormatError(`This .${ext} file is not an Office Open XML package (it is not a zip): save it again from the Office application.`);
  if (ext === 'pdf') throw new UnsupportedFormatError('This .pdf file does not start with a PDF header: it is not a PDF.');

  const imageKind = starts(head, 0x89, 0x50, 0x4e, 0x47) ? 'png'
    : starts(head, 0xff, 0xd8, 0xff) ? 'jpeg'
    : starts(head, 0x49, 0x49, 0x2a, 0x00) || starts(head, 0x4d, 0x4d, 0x00, 0x2a) ? 'tiff'
    : undefined;
  if (imageKind) {
    if (!input.ocrEnabled) {
      throw new UnsupportedFormatError('Image uploads need OCR, which is off: set SVC_RAG_OCR_ENABLED=true to index PNG, JPEG and TIFF files.');
    }
    return { format: 'image', imageKind };
  }
  if (starts(head, 0x1f, 0x8b) || starts(head, 0x37, 0x7a, 0xbc, 0xaf) || starts(head, 0x52, 0x61, 0x72, 0x21)) {
    throw new UnsupportedFormatError('Compressed archives are not supported: unpack the archive and upload the documents one by one.');
  }
  if (!looksLikeText(head)) {
    throw new UnsupportedFormatError(`${ext ? `.${ext} files` : 'This file'} look binary and are not supported: upload PDF, DOCX, PPTX, XLSX, HTML, Markdown or text.`);
  }
  const byName = TEXT_EXTENSIONS[ext];
  if (byName) return { format: byName };
  if (declared === 'text/html') return { format: 'html' };
  if (declared === 'text/markdown') return { format: 'markdown' };
  if (declared.startsWith('text/') || ext === '') return { format: 'text' };
  throw new UnsupportedFormatError(`.${ext} files are not supported: upload PDF, DOCX, PPTX, XLSX, HTML, Markdown or text.`);
}

function isAudio(head: Uint8Array): boolean {
  return (
    (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WAVE')) ||
    ascii(head, 0, 'ID3') ||
    (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0 && !starts(head, 0xff, 0xd8)) ||
    ascii(head, 0, 'OggS') ||
    ascii(head, 0, 'fLaC') ||
    (ascii(head, 4, 'ftyp') && (ascii(head, 8, 'M4A') || ascii(head, 8, 'M4B')))
  );
}

/** No NUL bytes and valid UTF-8 (a sequence cut at the end of the head is fine). */
function looksLikeText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(trimIncompleteUtf8(head));
    return true;
  } catch {
    return false;
  }
}

function trimIncompleteUtf8(bytes: Uint8Array): Uint8Array {
  let end = bytes.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const b = bytes[end - i]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    if (need > i) end -= i;
    break;
  }
  return bytes.subarray(0, end);
}

function mismatch(filename: string, what: string) {
  return new UnsupportedFormatError(`${filename} holds ${what} but its name says otherwise: rename it with the right extension.`);
}
