import { DocumentTooLargeError } from './errors.ts';

// The bounds on the work one upload may cause. Defaults fit the 50 MiB upload cap on a 2-core machine.
export type ExtractLimits = {
  /** PDF pages read; beyond it the document is refused rather than cut short. */
  maxPdfPages: number;
  /** Pages without a text layer that may be OCR'd in one document (about half a second each). */
  maxOcrPages: number;
  /** Image pixels (width × height) decoded for OCR: a small PNG can declare a huge canvas. */
  maxImagePixels: number;
  /** Parts in an Office package. */
  maxZipEntries: number;
  /** Bytes inflated from an Office package, whatever it declares. */
  maxInflatedBytes: number;
  /** Inflated bytes per byte of the file, enforced above `inflateRatioFloorBytes`: a zip bomb is stopped early. */
  maxInflateRatio: number;
  inflateRatioFloorBytes: number;
  /** Elements read from one document: HTML, or an Office package's XML parts together (a huge sheet or a crafted one). */
  maxElements: number;
  /** Elements open at once (in one Office XML part, or an HTML page): real documents stay within a few dozen. */
  maxDepth: number;
  /** Characters of text one document may yield: a small sheet can repeat one long shared string a million times. */
  maxTextChars: number;
  /** Wall-clock time for one extraction, OCR included. */
  timeoutMs: number;
};

export const DEFAULT_LIMITS: ExtractLimits = {
  maxPdfPages: 5000,
  maxOcrPages: 300,
  maxImagePixels: 60_000_000,
  maxZipEntries: 10_000,
  maxInflatedBytes: 200 * 1024 * 1024,
  maxInflateRatio: 200,
  inflateRatioFloorBytes: 16 * 1024 * 1024,
  maxElements: 10_000_000,
  maxDepth: 512,
  maxTextChars: 64 * 1024 * 1024,
  timeoutMs: 300_000,
};

/**
 * A point in time past which extraction stops at its next check (between pages, parts and zip chunks); it also stops
 * there once `signal` aborts (its caller no longer wants the text), throwing the signal's reason.
 */
export type Deadline = { readonly at: number; check(): void; expired(): DocumentTooLargeError };

export function deadline(filename: string, timeoutMs: number, now = Date.now, signal?: AbortSignal): Deadline {
  const at = now() + timeoutMs;
  const expired = () =>
    new DocumentTooLargeError(
      `Extracting ${filename} took longer than the ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`} limit and was stopped: split the document into smaller files and upload them separately.`,
    );
  return {
    at,
    expired,
    check() {
      signal?.throwIfAborted();
      if (now() > at) throw expired();
    },
  };
}
