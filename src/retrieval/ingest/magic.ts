// What a file's first bytes say it is. Only signatures, no decisions: detect.ts combines them with the name.

export type Sniffed =
  | { kind: 'pdf' | 'zip' | 'ole2' | 'utf16' | 'executable' }
  | { kind: 'image'; image: 'png' | 'jpeg' | 'tiff' }
  | { kind: 'other-image'; what: string }
  | { kind: 'audio'; what: string }
  | { kind: 'video'; what: string }
  | { kind: 'archive'; what: string };

const at = (head: Uint8Array, offset: number, ...bytes: number[]) => bytes.every((b, i) => head[offset + i] === b);
const ascii = (head: Uint8Array, offset: number, text: string) => [...text].every((ch, i) => head[offset + i] === ch.charCodeAt(0));

/** Acrobat and pdf.js accept the header anywhere in the first 1024 bytes (some generators prepend junk). */
export function pdfHeaderOffset(head: Uint8Array): number {
  const limit = Math.min(head.length - 5, 1024);
  for (let i = 0; i <= limit; i++) if (ascii(head, i, '%PDF-')) return i;
  return -1;
}

export function sniff(head: Uint8Array): Sniffed | undefined {
  if (ascii(head, 0, '%PDF-')) return { kind: 'pdf' };
  if (at(head, 0, 0x50, 0x4b, 0x03, 0x04) || at(head, 0, 0x50, 0x4b, 0x05, 0x06) || at(head, 0, 0x50, 0x4b, 0x07, 0x08))
    return { kind: 'zip' };
  if (at(head, 0, 0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1)) return { kind: 'ole2' };
  if (at(head, 0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return { kind: 'image', image: 'png' };
  if (at(head, 0, 0xff, 0xd8, 0xff)) return { kind: 'image', image: 'jpeg' };
  if (at(head, 0, 0x49, 0x49, 0x2a, 0x00) || at(head, 0, 0x4d, 0x4d, 0x00, 0x2a)) return { kind: 'image', image: 'tiff' };
  if (ascii(head, 0, 'GIF87a') || ascii(head, 0, 'GIF89a')) return { kind: 'other-image', what: 'GIF' };
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WEBP')) return { kind: 'other-image', what: 'WebP' };
  if (ascii(head, 4, 'ftyp') && /^(heic|heix|mif1|avif)$/.test(String.fromCharCode(...head.subarray(8, 12)))) {
    return { kind: 'other-image', what: 'HEIC/AVIF' };
  }
  if (ascii(head, 0, 'BM') && head.length >= 26 && head[6] === 0 && head[7] === 0 && head[8] === 0 && head[9] === 0) {
    return { kind: 'other-image', what: 'BMP' };
  }
  // before audio: a UTF-16 byte-order mark also reads as an MPEG frame sync
  if (at(head, 0, 0xff, 0xfe) || at(head, 0, 0xfe, 0xff) || looksLikeBomlessUtf16(head)) return { kind: 'utf16' };
  const audio = sniffAudio(head);
  if (audio) return { kind: 'audio', what: audio };
  if (ascii(head, 4, 'ftyp')) return { kind: 'video', what: 'MP4/QuickTime' }; // after the M4A and HEIC brands
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'AVI ')) return { kind: 'video', what: 'AVI' };
  if (at(head, 0, 0x1a, 0x45, 0xdf, 0xa3)) return { kind: 'video', what: 'Matroska/WebM' };
  if (
    at(head, 0, 0x7f, 0x45, 0x4c, 0x46) || // ELF
    (ascii(head, 0, 'MZ') && head.subarray(0, 64).includes(0)) || // DOS/PE: real headers hold NUL bytes, a text "MZ…" does not
    at(head, 0, 0xfe, 0xed, 0xfa, 0xce) ||
    at(head, 0, 0xfe, 0xed, 0xfa, 0xcf) ||
    at(head, 0, 0xcf, 0xfa, 0xed, 0xfe) ||
    at(head, 0, 0xce, 0xfa, 0xed, 0xfe) || // Mach-O
    at(head, 0, 0xca, 0xfe, 0xba, 0xbe) || // Mach-O fat binary or Java class
    at(head, 0, 0x00, 0x61, 0x73, 0x6d) // WebAssembly
  ) {
    return { kind: 'executable' };
  }
  if (at(head, 0, 0x1f, 0x8b)) return { kind: 'archive', what: 'gzip' };
  if (at(head, 0, 0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c)) return { kind: 'archive', what: '7-Zip' };
  if (ascii(head, 0, 'Rar!')) return { kind: 'archive', what: 'RAR' };
  if (ascii(head, 0, 'BZh')) return { kind: 'archive', what: 'bzip2' };
  if (at(head, 0, 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00)) return { kind: 'archive', what: 'xz' };
  if (at(head, 0, 0x28, 0xb5, 0x2f, 0xfd)) return { kind: 'archive', what: 'zstd' };
  if (ascii(head, 257, 'ustar')) return { kind: 'archive', what: 'tar' };
  return undefined;
}

function sniffAudio(head: Uint8Array): string | undefined {
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WAVE')) return 'WAV';
  if (ascii(head, 0, 'ID3')) return 'MP3';
  if (ascii(head, 0, 'OggS')) return 'Ogg';
  if (ascii(head, 0, 'fLaC')) return 'FLAC';
  if (ascii(head, 0, 'FORM') && (ascii(head, 8, 'AIFF') || ascii(head, 8, 'AIFC'))) return 'AIFF';
  if (ascii(head, 4, 'ftyp') && /^(M4A |M4B |M4P )$/.test(String.fromCharCode(...head.subarray(8, 12)))) return 'M4A';
  if (isMpegFrame(head)) return 'MP3';
  if (head[0] === 0xff && (head[1] === 0xf1 || head[1] === 0xf9)) return 'AAC';
  return undefined;
}

/** An MPEG audio frame header: 11 sync bits, then a valid version, layer, bitrate and sample rate. */
function isMpegFrame(head: Uint8Array): boolean {
  const [b0, b1 = 0, b2 = 0] = head;
  if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) return false;
  const version = (b1 >> 3) & 3;
  const layer = (b1 >> 1) & 3;
  const bitrate = b2 >> 4;
  const rate = (b2 >> 2) & 3;
  return version !== 1 && layer !== 0 && bitrate !== 0xf && rate !== 3;
}

/** ASCII text saved as UTF-16 without a byte-order mark: every other byte is NUL. */
function looksLikeBomlessUtf16(head: Uint8Array): boolean {
  const n = Math.min(head.length, 512) & ~1;
  if (n < 8) return false;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i += 2) {
    if (head[i] === 0) even++;
    if (head[i + 1] === 0) odd++;
  }
  const half = n / 2;
  return (odd > half * 0.9 && even === 0) || (even > half * 0.9 && odd === 0);
}

/** Offset of the first invalid UTF-8 sequence, or -1. With `partial`, a sequence cut by the end is not an error. */
export function firstInvalidUtf8(bytes: Uint8Array, partial: boolean): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    const need = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0) return i;
    const end = Math.min(i + need, n - 1);
    for (let k = i + 1; k <= end; k++) if ((bytes[k]! & 0xc0) !== 0x80) return i;
    if (i + need >= n) return partial ? -1 : i;
    const b1 = bytes[i + 1]!;
    // overlong forms and surrogates are not well-formed UTF-8
    if ((b === 0xe0 && b1 < 0xa0) || (b === 0xed && b1 > 0x9f) || (b === 0xf0 && b1 < 0x90) || (b === 0xf4 && b1 > 0x8f)) return i;
    i += need + 1;
  }
  return -1;
}
