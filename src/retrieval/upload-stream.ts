import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { badRequest, payloadTooLarge } from '../platform/errors.ts';

// Streams the multipart part `file` to a temporary file, hashing as it goes (and keeping its first bytes for format
// detection) and stopping at the size cap, so an upload never sits in memory. The caller removes the file
// (`discard`, which removes it once however often it is called) whatever happens next.

export type SpooledUpload = {
  path: string;
  filename: string;
  declaredType: string;
  size: number;
  sha256: string;
  head: Uint8Array;
  discard(): Promise<void>;
};

const HEAD_BYTES = 8192;

export async function spoolUpload(request: Request, opts: { maxBytes: number; tmpDir?: string | undefined }): Promise<SpooledUpload> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    throw badRequest('Upload as multipart/form-data with one file part named "file".');
  }
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > opts.maxBytes + 64 * 1024) throw tooLarge(opts.maxBytes);
  if (!request.body) throw badRequest('The upload has no body.');

  const dir = opts.tmpDir ?? join(tmpdir(), 'svc-uploads');
  await mkdir(dir, { recursive: true });
  const path = join(dir, randomUUID());
  let removed: Promise<void> | undefined;
  const discard = () => (removed ??= rm(path, { force: true }));

  try {
    return { ...(await receive(request, contentType, path, opts.maxBytes)), path, discard };
  } catch (err) {
    await discard();
    throw err;
  }
}

function receive(request: Request, contentType: string, path: string, maxBytes: number): Promise<Omit<SpooledUpload, 'path' | 'discard'>> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, limits: { files: 1, fileSize: maxBytes, parts: 20 } });
    } catch (err) {
      reject(badRequest(`Malformed multipart request: ${(err as Error).message}`));
      return;
    }
    let found: Promise<Omit<SpooledUpload, 'path' | 'discard'>> | undefined;
    parser.on('file', (field, stream, info) => {
      if (field !== 'file' || found) {
        stream.resume();
        return;
      }
      const hash = createHash('sha256');
      const head = Buffer.alloc(HEAD_BYTES);
      let size = 0;
      let truncated = false;
      stream.on('data', (chunk: Buffer) => {
        if (size < HEAD_BYTES) chunk.copy(head, size, 0, Math.min(chunk.length, HEAD_BYTES - size));
        size += chunk.length;
        hash.update(chunk);
      });
      stream.on('limit', () => {
        truncated = true;
      });
      found = pipeline(stream, createWriteStream(path)).then(() => {
        if (truncated) throw tooLarge(maxBytes);
        return {
          filename: info.filename ?? 'upload',
          declaredType: info.mimeType ?? '',
          size,
          sha256: hash.digest('hex'),
          head: new Uint8Array(head.buffer, head.byteOffset, Math.min(size, HEAD_BYTES)),
        };
      });
      found.catch(() => {});
    });
    parser.on('error', (err: Error) => reject(badRequest(`Malformed multipart request: ${err.message}`)));
    parser.on('close', () => {
      if (!found) reject(badRequest('The multipart request has no file part named "file".'));
      else found.then(resolve, reject);
    });
    Readable.fromWeb(request.body as unknown as WebReadableStream)
      .on('error', reject)
      .pipe(parser);
  });
}

const tooLarge = (maxBytes: number) =>
  payloadTooLarge(`The file is larger than the upload limit of ${maxBytes} bytes (SVC_MAX_UPLOAD_BYTES).`);
