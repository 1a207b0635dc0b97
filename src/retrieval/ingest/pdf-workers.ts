import { Worker } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from '../../platform/worker-heap.ts';

// PDF text is read on worker threads, not on the thread that answers requests: pdf.js is synchronous CPU work (about
// a millisecond a page), so on the main thread every upload held up every query and every other upload. A document
// is split across all the workers, each opening its own copy and taking the next page not yet taken (a counter in
// shared memory), so one upload uses every core the service has, a long PDF is read in a fraction of the time, and a
// worker the machine slows down reads fewer pages instead of holding the rest up. Workers start with the first PDF,
// do not keep the process alive, stop once no PDF has come for `idleMs` (each holds 25 to 35 MB), and a crashed or
// stopped one is replaced by the next PDF.

/** What one worker read of the document: the pages it took (see pdf-worker.mjs). */
type Share = {
  numPages?: number;
  pages?: SharedPage[];
  failure?: Answered;
};

export type SharedPage = { page: number; text: string; ocr: boolean };

/** Why a document could not be read; `page` for the failures of one page. */
export type WorkerFailure =
  | { kind: 'password' | 'open'; message: string }
  | { kind: 'pages' }
  | { kind: 'page' | 'text'; page: number; message: string }
  | { kind: 'cancelled' };

/** What a worker answers: a document's failure, or a fault in the worker's own code (thrown by `read`). */
type Answered = WorkerFailure | { kind: 'internal'; message: string };

export type PdfText = { numPages: number; pages: SharedPage[] } | { numPages?: number; failure: WorkerFailure };

export interface PdfWorkers {
  readonly size: number;
  /** Workers running now: none before the first PDF and after `idleMs` without one. */
  readonly running: number;
  /** Workers started since creation: `size` at most for the first PDF, as many again after each idle stop. */
  readonly starts: number;
  /** Every page's text, in page order, or the failure of the lowest page (a document-wide one first). */
  read(
    bytes: Uint8Array,
    opts: { maxPages: number; signal?: AbortSignal | undefined; onProgress?: ((page: number, pages: number) => void) | undefined },
  ): Promise<PdfText>;
  close(): Promise<void>;
}

/** How often a document's progress is read from the workers' counters. */
const PROGRESS_MS = 200;

type Pending = { resolve(share: Share): void; reject(err: Error): void };

/** How long the workers wait for another PDF before they stop. */
export const PDF_WORKERS_IDLE_MS = 30_000;

export function createPdfWorkers(size: number, opts: { idleMs?: number } = {}): PdfWorkers {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`PDF workers must be a positive integer, got ${size}`);
  const idleMs = opts.idleMs ?? PDF_WORKERS_IDLE_MS;
  const slots: ({ worker: Worker; pending: Map<number, Pending> } | undefined)[] = Array.from({ length: size }, () => undefined);
  let nextId = 0;
  let reading = 0; // documents being read
  let idle: NodeJS.Timeout | undefined;
  let starts = 0;

  async function stopAll(): Promise<void> {
    clearTimeout(idle);
    const running = slots.filter((s) => s !== undefined);
    slots.fill(undefined);
    await Promise.all(running.map((s) => s.worker.terminate()));
  }

  function slot(i: number) {
    const existing = slots[i];
    if (existing) return existing;
    const worker = new Worker(new URL('./pdf-worker.mjs', import.meta.url), { resourceLimits: WORKER_RESOURCE_LIMITS });
    starts++;
    worker.unref();
    const pending = new Map<number, Pending>();
    const fresh = { worker, pending };
    const fail = (err: Error) => {
      if (slots[i] === fresh) slots[i] = undefined; // the next document starts a new worker
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    };
    worker.on('message', (answer: Share & { id: number }) => {
      pending.get(answer.id)?.resolve(answer);
      pending.delete(answer.id);
    });
    worker.on('error', (err) => fail(new Error(`a PDF worker failed: ${err.message}`)));
    worker.on('exit', (code) => fail(new Error(`a PDF worker stopped (exit code ${code})`)));
    slots[i] = fresh;
    return fresh;
  }

  function ask(i: number, bytes: Uint8Array, taken: SharedArrayBuffer, maxPages: number, signal: AbortSignal | undefined): Promise<Share> {
    const { worker, pending } = slot(i);
    const id = nextId++;
    return new Promise<Share>((resolve, reject) => {
      const cancel = () => worker.postMessage({ type: 'cancel', id });
      signal?.addEventListener('abort', cancel, { once: true });
      const done = () => signal?.removeEventListener('abort', cancel);
      pending.set(id, {
        resolve: (share) => {
          done();
          resolve(share);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      });
      worker.postMessage({ type: 'read', id, bytes, taken, maxPages });
    });
  }

  return {
    size,
    get running() {
      return slots.filter((s) => s !== undefined).length;
    },
    get starts() {
      return starts;
    },
    async read(bytes, { maxPages, signal, onProgress }) {
      signal?.throwIfAborted();
      // the pages taken so far, counted by the workers themselves, and the page count the first to open it wrote
      const taken = new SharedArrayBuffer(8);
      const counts = new Int32Array(taken);
      // read from the shared counters while the workers read, for an upload's progress
      const watch = onProgress
        ? setInterval(() => {
            const pages = Atomics.load(counts, 1);
            if (pages > 0) onProgress(Math.min(Atomics.load(counts, 0), pages), pages);
          }, PROGRESS_MS)
        : undefined;
      clearTimeout(idle);
      reading++;
      const shares = await Promise.all(slots.map((_, i) => ask(i, bytes, taken, maxPages, signal))).finally(() => {
        clearInterval(watch);
        if (--reading > 0) return;
        idle = setTimeout(() => void (reading === 0 ? stopAll() : undefined), idleMs);
        idle.unref();
      });
      const failure = firstFailure(shares);
      if (failure) return { failure, ...(shares[0]?.numPages !== undefined ? { numPages: shares[0].numPages } : {}) };
      const pages = shares.flatMap((s) => s.pages ?? []).sort((a, b) => a.page - b.page);
      return { numPages: shares[0]?.numPages ?? 0, pages };
    },
    close: stopAll,
  };
}

/**
 * The failure the document would have met reading its pages in order: the document's own first, then the lowest
 * page. A fault in a worker's own code is thrown (a 500), not the document's.
 */
function firstFailure(shares: Share[]): WorkerFailure | undefined {
  let first: WorkerFailure | undefined;
  const rank = (f: WorkerFailure) => ('page' in f ? f.page : f.kind === 'cancelled' ? Number.POSITIVE_INFINITY : 0);
  for (const { failure } of shares) {
    if (!failure) continue;
    if (failure.kind === 'internal') throw new Error(`a PDF worker failed: ${failure.message}`);
    if (!first || rank(failure) < rank(first)) first = failure;
  }
  return first;
}
