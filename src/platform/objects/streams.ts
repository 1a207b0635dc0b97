import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { PutBody } from './store.ts';

// One Node stream from whatever the caller holds: an old-style Node stream, a Readable or a web ReadableStream.
export function toReadable(body: Exclude<PutBody, Uint8Array>): Readable {
  if (body instanceof Readable) return body;
  if (typeof (body as ReadableStream).getReader === 'function') {
    return Readable.fromWeb(body as unknown as WebReadableStream<Uint8Array>);
  }
  return new Readable().wrap(body as NodeJS.ReadableStream);
}

export const isBytes = (body: PutBody): body is Uint8Array => body instanceof Uint8Array;
