import { MalformedDocumentError, UnsupportedFormatError } from './errors.ts';
import { firstInvalidUtf8 } from './magic.ts';

export type Page = { page: number; text: string };

/** The charset an HTML file declares in a <meta> tag near its start, when it is not UTF-8 and the platform knows it. */
export function htmlCharset(bytes: Uint8Array): string | undefined {
  const start = new TextDecoder('latin1').decode(bytes.subarray(0, 4096));
  const label = /<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_:.-]+)/i.exec(start)?.[1];
  if (!label) return undefined;
  try {
    const encoding = new TextDecoder(label).encoding;
    return encoding === 'utf-8' ? undefined : encoding;
  } catch {
    return undefined; // unknown label: treated as UTF-8
  }
}

/**
 * The text of a text upload, byte-order mark dropped. `strict` (the name says text): valid UTF-8 without NUL
 * bytes, or a refusal naming the offset. Otherwise (a text/* type only) best effort: invalid bytes become U+FFFD.
 */
export function decodeText(bytes: Uint8Array, opts: { filename: string; strict: boolean; charset?: string }): string {
  if (opts.charset) return new TextDecoder(opts.charset).decode(bytes);
  if (!opts.strict)
    return new TextDecoder('utf-8')
      .decode(bytes)
      .replace(/^\uFEFF/, '')
      .replaceAll('\0', '');
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    throw new MalformedDocumentError(
      `${opts.filename} contains binary data (a NUL byte at offset ${nul}), not text: upload the document as text, PDF or Office file.`,
    );
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    const at = firstInvalidUtf8(bytes, false);
    throw new UnsupportedFormatError(
      `${opts.filename} is not UTF-8 text (byte 0x${(bytes[at] ?? 0).toString(16).toUpperCase()} at offset ${at} is not valid UTF-8): save it with UTF-8 encoding and upload it again.`,
    );
  }
}
