import { MalformedDocumentError, UnsupportedFormatError } from './errors.ts';
import { firstInvalidUtf8, pdfHeaderOffset, sniff } from './magic.ts';
import { htmlCharset } from './text.ts';
import { lookupTable } from '../../platform/lookup-table.ts';

// Stage one of recognising an upload, from its name, declared type and first bytes (up to 8 KiB). Bytes and name
// are read together: a signature decides what a file is, a name that contradicts it is refused rather than
// guessed past, and a name claiming a binary format the bytes do not show is refused as malformed. Which OOXML
// package a zip holds needs its central directory, so that is checked again on the whole file (package.ts).

export type Format = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'html' | 'markdown' | 'text' | 'image';
export type ImageKind = 'png' | 'jpeg' | 'tiff';
export type Detected = { format: Format; imageKind?: ImageKind };

export const ACCEPTED = 'PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown or UTF-8 text (.txt, .csv, .log)';

const TEXT_EXT: Record<string, 'html' | 'markdown' | 'text'> = lookupTable({
  md: 'markdown',
  markdown: 'markdown',
  mdown: 'markdown',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  txt: 'text',
  text: 'text',
  log: 'text',
  csv: 'text',
  tsv: 'text',
  json: 'text',
  jsonl: 'text',
  ndjson: 'text',
  yaml: 'text',
  yml: 'text',
  rst: 'text',
  adoc: 'text',
  org: 'text',
  tex: 'text',
  ini: 'text',
  conf: 'text',
});
const OOXML_EXT = lookupTable({ docx: 'docx', pptx: 'pptx', xlsx: 'xlsx' } as const);
const OOXML_MIME: Record<string, 'docx' | 'pptx' | 'xlsx'> = lookupTable({
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
});
const IMAGE_EXT: Record<string, ImageKind> = lookupTable({ png: 'png', jpg: 'jpeg', jpeg: 'jpeg', jpe: 'jpeg', tif: 'tiff', tiff: 'tiff' });
/** What each claimed binary format is called in a message. */
const CALLED: Record<string, string> = lookupTable({
  pdf: 'a PDF',
  docx: 'a Word document',
  pptx: 'a PowerPoint presentation',
  xlsx: 'an Excel workbook',
  png: 'a PNG image',
  jpeg: 'a JPEG image',
  tiff: 'a TIFF image',
  zip: 'a zip archive',
});
const LEGACY: Record<string, string> = lookupTable({
  doc: 'Legacy Word .doc files are not supported: save the document as .docx or PDF and upload it again.',
  dot: 'Legacy Word .dot templates are not supported: save the document as .docx or PDF and upload it again.',
  xls: 'Legacy Excel .xls files are not supported: save the workbook as .xlsx and upload it again.',
  xlt: 'Legacy Excel .xlt templates are not supported: save the workbook as .xlsx and upload it again.',
  ppt: 'Legacy PowerPoint .ppt files are not supported: save the presentation as .pptx or PDF and upload it again.',
  pps: 'Legacy PowerPoint .pps files are not supported: save the presentation as .pptx or PDF and upload it again.',
  pot: 'Legacy PowerPoint .pot templates are not supported: save the presentation as .pptx or PDF and upload it again.',
});
const ODF: Record<string, string> = lookupTable({ odt: '.docx', ods: '.xlsx', odp: '.pptx', odg: 'PDF' });
const AUDIO_EXT = new Set(['wav', 'mp3', 'ogg', 'oga', 'opus', 'flac', 'm4a', 'aac', 'wma', 'aif', 'aiff', 'amr']);
const EXEC_EXT = new Set(['exe', 'dll', 'so', 'dylib', 'msi', 'class', 'jar', 'wasm', 'apk', 'deb', 'rpm']);
const ARCHIVE_EXT = new Set(['zip', 'gz', 'tgz', '7z', 'rar', 'tar', 'bz2', 'xz', 'zst']);

export function extensionOf(filename: string): string {
  const base = filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1); // a browser may send a path
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

const audioMessage = (what: string) =>
  `${what} audio is not supported: there is no transcription. Transcribe the recording elsewhere and upload the text.`;
const executableMessage = () => `Executable files are not supported: upload a document (${ACCEPTED}).`;
const archiveMessage = (what: string) => `${what} archives are not supported: unpack the archive and upload the documents one by one.`;

export function detectFormat(input: { filename: string; declaredType?: string; head: Uint8Array; ocrEnabled?: boolean }): Detected {
  const { filename, head } = input;
  const ext = extensionOf(filename);
  const declared = (input.declaredType ?? '').toLowerCase().split(';')[0]!.trim();
  const sniffed = sniff(head);

  // refused whatever the name says
  switch (sniffed?.kind) {
    case 'ole2':
      if (ext in OOXML_EXT) {
        throw new UnsupportedFormatError(
          `${filename} is a password-protected (encrypted) or legacy Office file, which cannot be read: remove the password or save it again as .${ext}, then upload it again.`,
        );
      }
      throw new UnsupportedFormatError(
        LEGACY[ext] ??
          'Legacy Office (OLE2) files are not supported: save the file in a current Office format (.docx, .xlsx, .pptx) or as PDF and upload it again.',
      );
    case 'audio':
      throw new UnsupportedFormatError(audioMessage(sniffed.what));
    case 'video':
      throw new UnsupportedFormatError(
        `${sniffed.what} video is not supported: there is no transcription. Transcribe the recording elsewhere and upload the text.`,
      );
    case 'executable':
      throw new UnsupportedFormatError(executableMessage());
    case 'archive':
      throw new UnsupportedFormatError(archiveMessage(sniffed.what));
    case 'other-image':
      throw new UnsupportedFormatError(
        `${sniffed.what} images are not supported: convert the image to PNG, JPEG or TIFF and upload it again.`,
      );
    case 'utf16':
      throw new UnsupportedFormatError(`${filename} is UTF-16 text: save it as UTF-8 and upload it again.`);
  }
  // refused by name, whatever the bytes: a renamed legacy or audio file is still one
  if (LEGACY[ext]) throw new UnsupportedFormatError(LEGACY[ext]);
  if (AUDIO_EXT.has(ext) || declared.startsWith('audio/')) throw new UnsupportedFormatError(audioMessage(ext ? ext.toUpperCase() : 'This'));
  if (EXEC_EXT.has(ext)) throw new UnsupportedFormatError(executableMessage());

  const claimed = ext === 'pdf' ? 'pdf' : ext in OOXML_EXT ? OOXML_EXT[ext as keyof typeof OOXML_EXT] : IMAGE_EXT[ext];
  const mismatch = (holds: string) =>
    new MalformedDocumentError(
      `${filename} holds ${CALLED[holds]} but its name says ${CALLED[claimed ?? ''] ?? `.${ext}`}: rename it with the right extension and upload it again.`,
    );

  if (sniffed?.kind === 'pdf' || (ext === 'pdf' && pdfHeaderOffset(head) >= 0)) {
    if (ext !== 'pdf' && (claimed || TEXT_EXT[ext])) throw mismatch('pdf');
    return { format: 'pdf' };
  }
  if (sniffed?.kind === 'zip') {
    const office = ext in OOXML_EXT ? OOXML_EXT[ext as keyof typeof OOXML_EXT] : ext === '' ? OOXML_MIME[declared] : undefined;
    if (office) return { format: office };
    if (ODF[ext])
      throw new UnsupportedFormatError(`OpenDocument .${ext} files are not supported: save the file as ${ODF[ext]} and upload it again.`);
    if (claimed) throw mismatch('zip');
    throw new UnsupportedFormatError(archiveMessage(`Zip${ext && ext !== 'zip' ? ` (.${ext})` : ''}`));
  }
  if (sniffed?.kind === 'image') {
    if ((claimed && !IMAGE_EXT[ext]) || TEXT_EXT[ext]) throw mismatch(sniffed.image);
    if (!input.ocrEnabled) {
      throw new UnsupportedFormatError(
        'Image files are only indexed when OCR is on, and it is off: ask the operator to set SVC_RAG_OCR_ENABLED=true, or upload the text as a PDF or text file.',
      );
    }
    return { format: 'image', imageKind: sniffed.image };
  }
  if (claimed) {
    throw new MalformedDocumentError(
      ext in OOXML_EXT
        ? `${filename} is not an Office Open XML package (it is not a zip archive): it is damaged or misnamed. Save it again from the Office application and upload it again.`
        : `${filename} is not ${CALLED[claimed]}: its first bytes are not ${claimed === 'pdf' ? "a PDF header ('%PDF-')" : `a ${claimed.toUpperCase()} signature`}. It is damaged or misnamed; export it again and upload it again.`,
    );
  }
  if (ARCHIVE_EXT.has(ext)) throw new UnsupportedFormatError(archiveMessage(ext === 'zip' ? 'Zip' : `.${ext}`));
  return detectText(filename, ext, declared, head);
}

/** No binary signature: text, strictly UTF-8 when the name says text, best effort when only the declared type does. */
function detectText(filename: string, ext: string, declared: string, head: Uint8Array): Detected {
  const byName = TEXT_EXT[ext];
  const byType =
    declared === 'text/html' || declared === 'application/xhtml+xml'
      ? 'html'
      : declared === 'text/markdown' || declared === 'text/x-markdown'
        ? 'markdown'
        : declared.startsWith('text/')
          ? 'text'
          : undefined;
  if (head.includes(0)) {
    throw new UnsupportedFormatError(`${filename} contains binary data (NUL bytes), not text: upload ${ACCEPTED}.`);
  }
  const format = byName ?? byType ?? (ext === '' ? 'text' : undefined);
  if (!format) {
    throw new UnsupportedFormatError(
      `.${ext} files are not supported: upload ${ACCEPTED}. If the file is plain UTF-8 text, rename it to .txt.`,
    );
  }
  const strict = byName !== undefined || !byType;
  const bad = firstInvalidUtf8(head, true);
  if (bad >= 0 && strict && !(format === 'html' && htmlCharset(head))) {
    throw new UnsupportedFormatError(
      `${filename} is not UTF-8 text (byte 0x${head[bad]!.toString(16).toUpperCase()} at offset ${bad} is not valid UTF-8): save it with UTF-8 encoding and upload it again.`,
    );
  }
  return { format };
}

/** Whether a text upload must be valid UTF-8 throughout (its name says text) or is decoded best effort (text/* only). */
export const strictText = (filename: string): boolean => extensionOf(filename) in TEXT_EXT;
