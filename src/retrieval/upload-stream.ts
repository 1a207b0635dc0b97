import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { badRequest, payloadTooLarge } from '../platform/errors.ts';
import type { DocumentContent } from './ingest/index.ts';

// Receives the multipart part `file`, hashing as it goes (and keeping its first bytes for format detection) and
// stopping at the size cap. A file of at most `memoryBytes` stays in memory; a larger one goes to a temporary file
// (what was held, then the rest as it streams), so a large upload never sits in memory. The caller lets go of it
// (`discard`, which removes the file once however often it is called) whatever happens next.

export type SpooledUpload = {
  /** The bytes themselves, or the temporary file holding them. */
  content: DocumentContent;
  filename: string;
  declaredType: string;
  size: number;
  sha256: string;
  head: Uint8Array;
  discard(): Promise<void>;
};

export type SpoolOptions = {
  maxBytes: number;
  /** A file larger than this is written to a temporary file; 0: always. */
  memoryBytes: number;
  tmpDir?: string | undefined;
  /** Stops receiving (the rest of the body is read and dropped) and removes what was kept. */
  signal?: AbortSignal;
  /** Told the bytes of the file received so far, as they arrive (an upload's progress). */
  onBytes?: (received: number, filename: string) => void;
};

const HEAD_BYTES = 8192;

export async function spoolUpload(request: Request, opts: SpoolOptions): Promise<SpooledUpload> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    throw badRequest('Upload as multipart/form-data with one file part named "file".');
  }
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > opts.maxBytes + 64 * 1024) throw tooLarge(opts.maxBytes);
  if (!request.body) throw badRequest('The upload has no body.');

  // the folder is made only when the upload outgrows memory (most uploads never touch the disk)
  const path = spoolName(opts.tmpDir);
  let removed: Promise<void> | undefined;
  const discard = () => (removed ??= rm(path, { force: true }));

  try {
    const received = await receive(request, contentType, new Spool(path, opts.memoryBytes), opts);
    // a file held in memory has nothing on disk to remove
    return { ...received, discard: 'path' in received.content ? discard : kept };
  } catch (err) {
    await discard();
    throw err;
  }
}

const kept = () => Promise.resolve();

/** A fresh name for a temporary file in the spool folder, which is made here; the file itself is not created. */
export async function spoolPath(tmpDir: string | undefined): Promise<string> {
  const path = spoolName(tmpDir);
  await mkdir(dirname(path), { recursive: true });
  return path;
}

const spoolName = (tmpDir: string | undefined) => join(tmpDir ?? join(tmpdir(), 'svc-uploads'), randomUUID());

type Received = Omit<SpooledUpload, 'discard'>;

function receive(request: Request, contentType: string, spool: Spool, opts: SpoolOptions): Promise<Received> {
  const { maxBytes, signal } = opts;
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // a file name's bytes are UTF-8, as browsers and curl send them (busboy would read them as Latin-1)
      parser = busboy({
        headers: { 'content-type': contentType },
        defParamCharset: 'utf8',
        limits: { files: 1, fileSize: maxBytes, parts: 20 },
      });
    } catch (err) {
      reject(badRequest(`Malformed multipart request: ${(err as Error).message}`));
      return;
    }
    const body = Readable.fromWeb(request.body as unknown as WebReadableStream);
    let file: Readable | undefined;
    let found: Promise<Received> | undefined;
    parser.on('file', (field, stream, info) => {
      if (field !== 'file' || found) {
        stream.resume();
        return;
      }
      file = stream;
      const hash = createHash('sha256');
      const head = Buffer.alloc(HEAD_BYTES);
      let size = 0;
      let truncated = false;
      stream.on('data', (chunk: Buffer) => {
        if (size < HEAD_BYTES) chunk.copy(head, size, 0, Math.min(chunk.length, HEAD_BYTES - size));
        size += chunk.length;
        hash.update(chunk);
        opts.onBytes?.(size, info.filename ?? 'upload');
      });
      stream.on('limit', () => {
        truncated = true;
      });
      found = pipeline(stream, spool).then(() => {
        if (truncated) throw tooLarge(maxBytes);
        return {
          content: spool.content(),
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
    const stop = () => {
      // the rest of the body is read and dropped (as Node does with a body no handler reads), so a client still
      // sending is not left stalled on a paused stream; the spool is closed before the promise settles, so the
      // caller's discard finds any file it wrote
      body.unpipe(parser);
      body.resume();
      const reason = signal?.reason ?? new Error('upload abandoned');
      if (file && found) {
        file.destroy(reason);
        found.then(
          () => reject(reason),
          () => reject(reason),
        );
      } else reject(reason);
    };
    body.on('error', reject).pipe(parser);
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
  });
}

/**
 * Where a file's bytes go as they arrive: kept in memory up to `memoryBytes`, and past that written to `path`
 * (what was kept first, then the rest). Finishes (and is destroyed) only once the file, if any, is closed.
 */
class Spool extends Writable {
  #held: Buffer[] = [];
  #size = 0;
  #bytes = new Uint8Array(0);
  #file: WriteStream | undefined;
  #error: Error | undefined;

  constructor(
    private readonly path: string,
    private readonly memoryBytes: number,
  ) {
    super();
  }

  /** What was received (once finished): the bytes, or the file. */
  content(): DocumentContent {
    return this.#file ? { path: this.path } : { bytes: this.#bytes };
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void) {
    if (!this.#file && this.#size + chunk.length <= this.memoryBytes) {
      this.#held.push(chunk);
      this.#size += chunk.length;
      done();
      return;
    }
    if (this.#file) {
      this.#toFile(this.#file, chunk, done);
      return;
    }
    // the first byte past memory: the folder, then the file, with what was held written first
    mkdir(dirname(this.path), { recursive: true }).then(() => {
      // stopped while the folder was made: no file, so the caller's discard has nothing to miss
      if (this.destroyed) return done();
      const file = createWriteStream(this.path);
      this.#file = file;
      file.on('error', (err) => {
        this.#error ??= err;
        this.destroy(err);
      });
      for (const held of this.#held) file.write(held);
      this.#held = [];
      this.#toFile(file, chunk, done);
    }, done);
  }

  #toFile(file: WriteStream, chunk: Buffer, done: (err?: Error | null) => void) {
    this.#size += chunk.length;
    if (file.write(chunk)) done();
    else file.once('drain', () => done());
  }

  override _final(done: (err?: Error | null) => void) {
    const file = this.#file;
    if (!file) {
      // one plain array of its own (not in Node's shared pool), which a worker may take over
      this.#bytes = new Uint8Array(this.#size);
      let at = 0;
      for (const chunk of this.#held) {
        this.#bytes.set(chunk, at);
        at += chunk.length;
      }
      this.#held = [];
      done();
      return;
    }
    file.end();
    closed(file).then(() => done(this.#error));
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void) {
    this.#held = [];
    const file = this.#file;
    if (!file) {
      done(err);
      return;
    }
    file.destroy();
    closed(file).then(() => done(err));
  }
}

const closed = (file: WriteStream) => new Promise<void>((resolve) => (file.closed ? resolve() : file.once('close', () => resolve())));

const tooLarge = (maxBytes: number) =>
  payloadTooLarge(`The file is larger than the upload limit of ${maxBytes} bytes (SVC_MAX_UPLOAD_BYTES).`);
