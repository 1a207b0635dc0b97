import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ObjectStoreError } from './errors.ts';
import type { ObjectStore, PutBody } from './store.ts';

// One Node stream from whatever the caller holds: an old-style Node stream, a Readable or a web ReadableStream.
export function toReadable(body: Exclude<PutBody, Uint8Array>): Readable {
  if (body instanceof Readable) return body;
  if (typeof (body as ReadableStream).getReader === 'function') {
    return Readable.fromWeb(body as unknown as WebReadableStream<Uint8Array>);
  }
  return new Readable().wrap(body as NodeJS.ReadableStream);
}

export const isBytes = (body: PutBody): body is Uint8Array => body instanceof Uint8Array;

/** A whole object, for small ones (a dashboard page): null when absent; refused above `maxBytes`, read or declared. */
export async function readObject(store: ObjectStore, key: string, maxBytes: number): Promise<Buffer | null> {
  const found = await store.get(key);
  if (!found) return null;
  const tooLarge = () => new ObjectStoreError('TOO_LARGE', `the object ${key} is larger than ${maxBytes} bytes`);
  if (found.size > maxBytes) {
    found.body.destroy();
    throw tooLarge();
  }
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of found.body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      found.body.destroy();
      throw tooLarge();
    }
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}
