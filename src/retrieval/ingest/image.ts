import type { ImageKind } from './detect.ts';
import { DocumentTooLargeError, MalformedDocumentError } from './errors.ts';

// The pixel size an image declares, read from its header before anything decodes it: a PNG of a few KiB can
// declare a canvas of billions of pixels, and a damaged header would only fail inside the OCR worker.

export function imageSize(bytes: Uint8Array, kind: ImageKind): { width: number; height: number } | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  try {
    if (kind === 'png') {
      if (String.fromCharCode(...bytes.subarray(12, 16)) !== 'IHDR') return undefined;
      return { width: view.getUint32(16), height: view.getUint32(20) };
    }
    if (kind === 'jpeg') return jpegSize(bytes, view);
    return tiffSize(view);
  } catch {
    return undefined; // read past the end: a truncated header
  }
}

function jpegSize(bytes: Uint8Array, view: DataView) {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
    }
    if (marker === 0xda || marker === 0xd9) return undefined; // scan data or end before any frame header
    at += 2 + view.getUint16(at + 2);
  }
  return undefined;
}

function tiffSize(view: DataView) {
  const little = view.getUint8(0) === 0x49;
  const ifd = view.getUint32(4, little);
  const count = view.getUint16(ifd, little);
  let width: number | undefined;
  let height: number | undefined;
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    const tag = view.getUint16(entry, little);
    const type = view.getUint16(entry + 2, little);
    const value = type === 3 ? view.getUint16(entry + 8, little) : view.getUint32(entry + 8, little);
    if (tag === 256) width = value;
    if (tag === 257) height = value;
  }
  return width && height ? { width, height } : undefined;
}

/** Whether the image's end marker is there (PNG IEND chunk, JPEG end-of-image); TIFF has none to check. */
function complete(bytes: Uint8Array, kind: ImageKind): boolean {
  const tail = bytes.subarray(Math.max(0, bytes.length - 1024));
  if (kind === 'png') return Buffer.from(tail).includes('IEND', 0, 'latin1');
  if (kind === 'jpeg') return tail.some((b, i) => b === 0xff && tail[i + 1] === 0xd9);
  return true;
}

/** Refuses an image that is truncated, whose header cannot be read, or that declares more pixels than OCR may decode. */
export function checkImage(bytes: Uint8Array, kind: ImageKind, filename: string, maxPixels: number): void {
  if (!complete(bytes, kind)) {
    throw new MalformedDocumentError(
      `${filename} is a truncated ${kind.toUpperCase()} image (its end is missing): upload the complete file.`,
    );
  }
  const size = imageSize(bytes, kind);
  if (!size || size.width === 0 || size.height === 0) {
    throw new MalformedDocumentError(
      `${filename} is a damaged ${kind.toUpperCase()} image (its header cannot be read): export the image again and upload it again.`,
    );
  }
  if (size.width * size.height > maxPixels) {
    throw new DocumentTooLargeError(
      `${filename} is ${size.width}×${size.height} pixels; OCR is limited to ${Math.round(maxPixels / 1e6)} megapixels: scale the image down (300 dpi is enough for text) and upload it again.`,
    );
  }
}
