import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Worker } from 'tesseract.js';

// OCR with tesseract.js, fully offline. The language data comes from the installed @tesseract.js-data packages;
// tesseract.js reads every language from one langPath folder, so the files are gathered into one folder once
// (copied under a temporary name and renamed, so a concurrent start never reads half a file). The worker script
// and the wasm core are loaded from node_modules. The worker starts on the first page that needs it, so a digital
// PDF never pays for OCR, is reused for every later page, and stops once no page has needed it for `idleMs` (its
// thread holds 55 MB of wasm memory and 14 MB of heap after a page; SVC_RAG_EXTRACT_IDLE_SECONDS); the next page
// starts it again. tesseract.js itself is loaded with the first start.

export interface OcrEngine {
  recognize(image: Uint8Array): Promise<string>;
  readonly started: boolean;
  /** Times the engine has started: once, then once again after each idle stop. */
  readonly starts: number;
  close(): Promise<void>;
}

/** The image could not be decoded by the OCR engine (a damaged or unsupported image). */
export class OcrImageError extends Error {
  override name = 'OcrImageError';
}

const require = createRequire(import.meta.url);

export async function gatherLanguages(langs: readonly string[], dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const lang of langs) {
    const source = join(dirname(require.resolve(`@tesseract.js-data/${lang}/package.json`)), '4.0.0_best_int', `${lang}.traineddata.gz`);
    const target = join(dir, `${lang}.traineddata.gz`);
    const [have, want] = await Promise.all([stat(target).catch(() => undefined), stat(source)]);
    if (have?.size === want.size) continue;
    const partial = `${target}.${randomUUID()}.tmp`;
    try {
      await copyFile(source, partial);
      await rename(partial, target);
    } finally {
      await rm(partial, { force: true });
    }
  }
  return dir;
}

/** How long the OCR worker waits for another page before it stops. */
export const OCR_IDLE_MS = 30_000;

export function createOcrEngine(opts: { langs: readonly string[]; dataDir?: string; idleMs?: number }): OcrEngine {
  const dataDir = opts.dataDir ?? join(tmpdir(), 'svc-tessdata');
  const idleMs = opts.idleMs ?? OCR_IDLE_MS;
  let worker: Promise<Worker> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let waiting = 0; // pages asked for and not yet read
  let idle: NodeJS.Timeout | undefined;
  let starts = 0;

  const stop = async () => {
    clearTimeout(idle);
    const w = worker;
    worker = undefined;
    if (w) await (await w.catch(() => undefined))?.terminate();
  };

  const start = async (): Promise<Worker> => {
    starts++;
    const langPath = await gatherLanguages(opts.langs, dataDir);
    // loaded with the first page OCR reads, not with the service: most never need it
    const { createWorker, OEM } = await import('tesseract.js');
    return createWorker([...opts.langs], OEM.LSTM_ONLY, {
      langPath,
      cachePath: langPath,
      // the .gz files are read as they are; nothing is written next to them or in the working directory
      cacheMethod: 'none',
      gzip: true,
      workerPath: require.resolve('tesseract.js/src/worker-script/node/index.js'),
      corePath: dirname(require.resolve('tesseract.js-core/package.json')),
      logger: () => {},
      // without a handler tesseract.js throws a failed job from its message listener, which kills the process
      errorHandler: () => {},
    });
  };

  const run = async (image: Uint8Array): Promise<string> => {
    worker ??= start().catch((err: unknown) => {
      worker = undefined; // a failed start is retried by the next page
      throw new Error(`The OCR engine could not start: ${(err as Error)?.message ?? String(err)}`);
    });
    const w = await worker;
    try {
      const { data } = await w.recognize(Buffer.from(image), {}, { text: true });
      return data.text;
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      if (/read image/i.test(message)) throw new OcrImageError(message);
      throw err;
    }
  };

  return {
    get started() {
      return worker !== undefined;
    },
    get starts() {
      return starts;
    },
    recognize(image) {
      clearTimeout(idle);
      waiting++;
      // one page at a time on the one worker
      const result = queue.then(() => run(image));
      queue = result
        .catch(() => {})
        .finally(() => {
          if (--waiting > 0) return;
          idle = setTimeout(() => void (waiting === 0 ? stop() : undefined), idleMs);
          idle.unref();
        });
      return result;
    },
    close: stop,
  };
}
