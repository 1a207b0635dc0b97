import JSZip from 'jszip';
import { DocumentTooLargeError, MalformedDocumentError } from './errors.ts';

// An OOXML package opened with every entry inflated under a running byte budget: jszip trusts the sizes an
// archive declares, so a zip bomb is stopped by counting what actually comes out.
export const PACKAGE_LIMITS = { entries: 5000, totalBytes: 256 * 1024 * 1024 };

export type Package = { zip: JSZip; entries: Map<string, Uint8Array> };

export async function openPackage(bytes: Uint8Array, kind: string, limits = PACKAGE_LIMITS): Promise<Package> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes, { checkCRC32: false });
  } catch (err) {
    throw new MalformedDocumentError(`This ${kind} file is not a readable Office package: ${(err as Error).message}`);
  }
  const files = Object.values(zip.files).filter((f) => !f.dir);
  if (files.length > limits.entries) throw new DocumentTooLargeError(`This ${kind} package has more than ${limits.entries} parts.`);
  const entries = new Map<string, Uint8Array>();
  let total = 0;
  for (const file of files) {
    const parts: Uint8Array[] = [];
    await new Promise<void>((resolve, reject) => {
      // internalStream is jszip's public streaming API, missing from its typings
      const stream = (file as unknown as { internalStream(t: 'uint8array'): StreamHelper }).internalStream('uint8array');
      stream
        .on('data', (chunk: Uint8Array) => {
          total += chunk.length;
          if (total > limits.totalBytes) {
            stream.pause();
            reject(new DocumentTooLargeError(`This ${kind} package inflates to more than ${limits.totalBytes} bytes; it is refused as a possible zip bomb.`));
          } else parts.push(chunk);
        })
        .on('error', (err: Error) => reject(new MalformedDocumentError(`This ${kind} package is damaged: ${err.message}`)))
        .on('end', () => resolve())
        .resume();
    });
    entries.set(file.name, Buffer.concat(parts));
  }
  if (!entries.has('[Content_Types].xml')) throw new MalformedDocumentError(`This ${kind} file is a zip but not an Office Open XML package.`);
  return { zip, entries };
}

export const entryText = (pkg: Package, name: string): string | undefined => {
  const bytes = pkg.entries.get(name);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
};

type StreamHelper = {
  on(event: 'data', fn: (chunk: Uint8Array) => void): StreamHelper;
  on(event: 'error', fn: (err: Error) => void): StreamHelper;
  on(event: 'end', fn: () => void): StreamHelper;
  pause(): StreamHelper;
  resume(): StreamHelper;
};
