import JSZip from 'jszip';
import { DocumentTooLargeError, MalformedDocumentError } from './errors.ts';
import type { Deadline, ExtractLimits } from './limits.ts';

// An Office package read part by part, each part inflated only when asked for and counted as it streams out.
// jszip trusts the sizes an archive declares, so the bound is on what actually comes out: a running total over
// the whole package, capped at a ratio of the file's size (a zip bomb stops within a few MiB) and an absolute cap.

export type ZipPackage = {
  /** Part names as stored (directories left out). */
  readonly names: readonly string[];
  /** The stored name of a part; OOXML part names compare case-insensitively. */
  find(name: string): string | undefined;
  bytes(name: string): Promise<Uint8Array | undefined>;
  text(name: string): Promise<string | undefined>;
  /** Bytes inflated so far. */
  readonly inflated: number;
};

type Bounds = Pick<ExtractLimits, 'maxZipEntries' | 'maxInflatedBytes' | 'maxInflateRatio' | 'inflateRatioFloorBytes'>;

const mib = (n: number) => `${Math.round((n / 1048576) * 10) / 10} MiB`;

export async function openZip(bytes: Uint8Array, opts: { filename: string; limits: Bounds; deadline: Deadline }): Promise<ZipPackage> {
  const { filename, limits, deadline } = opts;
  const declared = declaredEntryCount(bytes);
  if (declared !== undefined && declared > limits.maxZipEntries) {
    throw new DocumentTooLargeError(
      `${filename} holds ${declared} parts; the limit is ${limits.maxZipEntries}. Split the document and upload the parts separately.`,
    );
  }
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes, { checkCRC32: false, createFolders: false });
  } catch (err) {
    throw new MalformedDocumentError(
      `${filename} is a damaged zip package and cannot be read (${(err as Error).message}): save it again from the Office application and upload it again.`,
    );
  }
  const files = Object.values(zip.files).filter((f) => !f.dir);
  if (files.length > limits.maxZipEntries) {
    throw new DocumentTooLargeError(
      `${filename} holds ${files.length} parts; the limit is ${limits.maxZipEntries}. Split the document and upload the parts separately.`,
    );
  }
  const byLowerName = new Map(files.map((f) => [f.name.toLowerCase(), f]));
  const cap = Math.min(limits.maxInflatedBytes, Math.max(limits.inflateRatioFloorBytes, bytes.length * limits.maxInflateRatio));
  const cache = new Map<string, Uint8Array>();
  let inflated = 0;

  const inflate = (file: JSZip.JSZipObject): Promise<Uint8Array> =>
    new Promise((resolve, reject) => {
      const parts: Uint8Array[] = [];
      // jszip's documented streaming API (absent from its typings); pausing it stops the inflation
      const stream = (file as unknown as { internalStream(type: 'uint8array'): StreamHelper }).internalStream('uint8array');
      const fail = (err: Error) => {
        stream.pause();
        reject(err);
      };
      stream
        .on('data', (chunk) => {
          inflated += chunk.length;
          if (inflated > cap) {
            return fail(
              new DocumentTooLargeError(
                `${filename} inflates to more than ${mib(cap)} from a ${mib(bytes.length)} file; it is refused as a possible zip bomb. If it is a genuine document, split it into smaller files.`,
              ),
            );
          }
          if (Date.now() > deadline.at) return fail(deadline.expired());
          parts.push(chunk);
        })
        .on('error', (err) =>
          fail(
            new MalformedDocumentError(
              `${filename} has a damaged part ${file.name} (${err.message}): save it again from the Office application and upload it again.`,
            ),
          ),
        )
        .on('end', () => resolve(Buffer.concat(parts)))
        .resume();
    });

  const pkg: ZipPackage = {
    names: files.map((f) => f.name),
    get inflated() {
      return inflated;
    },
    find: (name) => byLowerName.get(name.replace(/^\//, '').toLowerCase())?.name,
    async bytes(name) {
      const file = byLowerName.get(name.replace(/^\//, '').toLowerCase());
      if (!file) return undefined;
      let data = cache.get(file.name);
      if (!data) {
        data = await inflate(file);
        cache.set(file.name, data);
      }
      return data;
    },
    async text(name) {
      const data = await pkg.bytes(name);
      return data === undefined ? undefined : new TextDecoder().decode(data);
    },
  };
  return pkg;
}

/** The entry count in the end-of-central-directory record (zip64 included), read before jszip parses every entry. */
export function declaredEntryCount(bytes: Uint8Array): number | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sig = (at: number, value: number) => at >= 0 && at + 4 <= bytes.length && view.getUint32(at, true) === value;
  const lowest = Math.max(0, bytes.length - 22 - 65535);
  for (let i = bytes.length - 22; i >= lowest; i--) {
    if (!sig(i, 0x06054b50)) continue;
    const total = view.getUint16(i + 10, true);
    if (total !== 0xffff) return total;
    const locator = i - 20;
    if (!sig(locator, 0x07064b50)) return undefined;
    const record = Number(view.getBigUint64(locator + 8, true));
    if (record + 40 > bytes.length || !sig(record, 0x06064b50)) return undefined;
    return Number(view.getBigUint64(record + 32, true));
  }
  return undefined;
}

type StreamHelper = {
  on(event: 'data', fn: (chunk: Uint8Array) => void): StreamHelper;
  on(event: 'error', fn: (err: Error) => void): StreamHelper;
  on(event: 'end', fn: () => void): StreamHelper;
  pause(): StreamHelper;
  resume(): StreamHelper;
};
