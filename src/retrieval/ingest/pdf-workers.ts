import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { PDF_WORKER_LIMITS } from '../../platform/worker-heap.ts';

// PDF text is read on worker threads, not on the thread that answers requests: pdf.js is synchronous CPU work (about
// a millisecond a page), so on the main thread every upload held up every query and every other upload. A document
// starts on one worker, the least busy; once that worker has opened it and knows its page count, a long document
// takes more of them (one per PAGES_PER_WORKER pages, up to `size`), each opening its own copy and taking the next
// page not yet taken (a counter in shared memory), so a long PDF is read in a fraction of the time and a worker the
// machine slows down reads fewer pages instead of holding the rest up. A shorter document is joined only by workers
// that have nothing to read (one per PAGES_PER_IDLE_WORKER pages), and only while the machine is not crowded (see
// roomForAnotherThread): a document uploaded on its own then uses a core that would wait anyway, while documents that
// come at once keep a worker each (a second worker's open is work the other document would have had), and on a
// crowded machine a second thread mostly waits for a core, holding the document up by the page it took. A worker that
// would join but has not started is started and loads PDFium for the next document instead (joining now would make
// this one wait for the load), so it costs its memory (25 to 35 MB) only once documents of several pages come.
// Workers start when first needed, do not keep the process alive, each stops once it has had no page to read for
// `idleMs`, and a crashed or stopped one is replaced by the next PDF.

/** What one worker read of the document: the pages it took (see pdf-worker.mjs). */
type Share = {
  numPages?: number;
  pages?: SharedPage[];
  /** A page rendered for OCR (a `render` message). */
  image?: ArrayBuffer;
  failure?: Answered;
};

export type SharedPage = { page: number; text: string; ocr: boolean };

/** Why a document could not be read; `page` for the failures of one page. */
export type WorkerFailure =
  | { kind: 'password' | 'open'; message: string }
  | { kind: 'pages' }
  | { kind: 'page' | 'text' | 'render'; page: number; message: string }
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
  /** Page `page` (from 1) rendered as a PNG for OCR, on the least busy worker. */
  render(bytes: Uint8Array, page: number): Promise<{ image: ArrayBuffer } | { failure: WorkerFailure }>;
  close(): Promise<void>;
}

/** How often a document's progress is read from the workers' counters. */
const PROGRESS_MS = 200;

/**
 * Pages a document needs for each worker it takes: up to this many, one worker reads it alone. Read one after
 * another at load 9 to 11 on two cores, 3-page PDFs went faster on one worker than split on two (145 to 229 pages/s
 * against 101 to 146), 10-page ones as fast (124 to 310 against 184 to 371), and 10-page ones with a second worker
 * joining once the first had opened them (8 pages a worker) slower (173 and 194 against 234 and 211).
 */
export const PAGES_PER_WORKER = 16;

/**
 * Pages a document needs for each worker with nothing to read that joins it: a ten-page PDF is read by two. A
 * worker's own open of a short PDF is a fraction of a millisecond against about one a page.
 */
export const PAGES_PER_IDLE_WORKER = 5;

/**
 * Whether a second thread on one document is likely to find a core: the last minute's load average (runnable
 * threads, the service's own included) below twice the cores the process may use. Measured 11-30 on two cores, the
 * LangChain bench's ten-page PDFs uploaded one after another, in turns of ten with and without an idle worker joining
 * (one process): at load 3.8 to 4.3, 0.95 to 1.15 times the pages/s (uploads at best 11.6 and 12.7 ms against 14.9
 * and 15.7), the mixed folder 1.05 to 1.08 one after another and three in flight; at load 5.3 to 7, 0.93 to 1.0.
 */
export const roomForAnotherThread = () => loadavg()[0]! < 2 * availableParallelism();

/** How long a worker waits for another page to read before it stops. */
export const PDF_WORKERS_IDLE_MS = 30_000;

type Pending = { resolve(share: Share): void; reject(err: Error): void; opened?: (numPages: number) => void };
type Slot = { worker: Worker; pending: Map<number, Pending>; idle?: NodeJS.Timeout };

export type PdfWorkersOptions = {
  /** How long a worker waits for another page before it stops (PDF_WORKERS_IDLE_MS). */
  idleMs?: number;
  /** Whether a worker with nothing to read may join a short document now (roomForAnotherThread; tests fix it). */
  room?: () => boolean;
  /** How often a document's progress is read from the workers' counters (PROGRESS_MS). */
  progressMs?: number;
};

export function createPdfWorkers(size: number, opts: PdfWorkersOptions = {}): PdfWorkers {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`PDF workers must be a positive integer, got ${size}`);
  const idleMs = opts.idleMs ?? PDF_WORKERS_IDLE_MS;
  const room = opts.room ?? roomForAnotherThread;
  const progressMs = opts.progressMs ?? PROGRESS_MS;
  const slots: (Slot | undefined)[] = Array.from({ length: size }, () => undefined);
  let nextId = 0;
  let starts = 0;

  function stop(i: number): Promise<number> | undefined {
    const s = slots[i];
    if (!s) return undefined;
    clearTimeout(s.idle);
    slots[i] = undefined;
    return s.worker.terminate();
  }

  async function stopAll(): Promise<void> {
    await Promise.all(slots.map((_, i) => stop(i)));
  }

  function slot(i: number): Slot {
    const existing = slots[i];
    if (existing) return existing;
    const worker = new Worker(new URL('./pdf-worker.mjs', import.meta.url), { resourceLimits: PDF_WORKER_LIMITS });
    starts++;
    worker.unref();
    const fresh: Slot = { worker, pending: new Map() };
    const fail = (err: Error) => {
      if (slots[i] === fresh) slots[i] = undefined; // the next document starts a new worker
      clearTimeout(fresh.idle);
      for (const p of fresh.pending.values()) p.reject(err);
      fresh.pending.clear();
    };
    worker.on('message', (answer: Share & { id: number; opened?: number }) => {
      const p = fresh.pending.get(answer.id);
      if (answer.opened !== undefined) return p?.opened?.(answer.opened);
      fresh.pending.delete(answer.id);
      if (fresh.pending.size === 0 && slots[i] === fresh) {
        fresh.idle = setTimeout(() => void (fresh.pending.size === 0 ? stop(i) : undefined), idleMs);
        fresh.idle.unref();
      }
      p?.resolve(answer);
    });
    worker.on('error', (err) => fail(new Error(`a PDF worker failed: ${err.message}`)));
    worker.on('exit', (code) => fail(new Error(`a PDF worker stopped (exit code ${code})`)));
    slots[i] = fresh;
    return fresh;
  }

  /** How many documents slot `i` is reading: a running idle worker first, then a new one, then the least busy. */
  const busy = (i: number) => {
    const s = slots[i];
    return s ? s.pending.size * 2 : 1;
  };
  const leastBusy = () => slots.map((_, i) => i).sort((a, b) => busy(a) - busy(b) || a - b);

  function ask(
    i: number,
    message: { type: 'read' | 'render' | 'warm'; [more: string]: unknown },
    signal: AbortSignal | undefined,
    opened?: (numPages: number) => void,
  ): Promise<Share> {
    const s = slot(i);
    clearTimeout(s.idle);
    const id = nextId++;
    return new Promise<Share>((resolve, reject) => {
      const cancel = () => s.worker.postMessage({ type: 'cancel', id });
      signal?.addEventListener('abort', cancel, { once: true });
      const done = () => signal?.removeEventListener('abort', cancel);
      s.pending.set(id, {
        resolve: (share) => {
          done();
          resolve(share);
        },
        reject: (err) => {
          done();
          reject(err);
        },
        ...(opened ? { opened } : {}),
      });
      s.worker.postMessage({ ...message, id, lead: opened !== undefined });
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
          }, progressMs)
        : undefined;
      const order = leastBusy();
      const asks: Promise<Share>[] = [];
      const message = { type: 'read', bytes, taken, maxPages } as const;
      // once the lead has opened the document: as many more workers as its pages are worth
      const recruit = (numPages: number) => {
        if (numPages > maxPages || signal?.aborted) return;
        const want = Math.min(size, Math.ceil(numPages / PAGES_PER_WORKER));
        const idleWant = want < size && room() ? Math.min(size, Math.floor(numPages / PAGES_PER_IDLE_WORKER)) : 0;
        for (const [n, i] of order.slice(1).entries()) {
          if (n + 1 < want) asks.push(ask(i, message, signal));
          else if (n + 1 >= idleWant) break;
          else if (slots[i]?.pending.size === 0) asks.push(ask(i, message, signal));
          else if (!slots[i]) ask(i, { type: 'warm' }, undefined).catch(() => {}); // read by the next document
        }
      };
      asks.push(ask(order[0]!, message, signal, recruit));
      let shares: Share[];
      try {
        // the lead answers after it opened the document, so every worker it recruited is in `asks` by then
        const lead = await asks[0]!;
        shares = await allPages(asks, lead.numPages);
      } catch (err) {
        for (const a of asks) a.catch(() => {}); // a failed read: the others' answers are not wanted
        throw err;
      } finally {
        clearInterval(watch);
      }
      const failure = firstFailure(shares);
      if (failure) return { failure, ...(shares[0]?.numPages !== undefined ? { numPages: shares[0].numPages } : {}) };
      const pages = shares.flatMap((s) => s.pages ?? []).sort((a, b) => a.page - b.page);
      return { numPages: shares[0]?.numPages ?? 0, pages };
    },
    async render(bytes, page) {
      const answer = await ask(leastBusy()[0]!, { type: 'render', bytes, page }, undefined);
      if (answer.failure?.kind === 'internal') throw new Error(`a PDF worker failed: ${answer.failure.message}`);
      if (answer.failure) return { failure: answer.failure };
      if (!answer.image) throw new Error('a PDF worker answered a render without an image');
      return { image: answer.image };
    },
    close: stopAll,
  };
}

/**
 * The workers' answers once they hold every page and no failure: a worker that joined but found every page taken
 * before it had opened the document (the machine ran it late) is not waited for. Otherwise every answer, as
 * Promise.all gives them (a worker's fault rejects).
 */
function allPages(asks: readonly Promise<Share>[], numPages: number | undefined): Promise<Share[]> {
  return new Promise((resolve, reject) => {
    const answers: (Share | undefined)[] = asks.map(() => undefined);
    let settled = 0;
    let pages = 0;
    let failed = false;
    const answered = () => answers.filter((a): a is Share => a !== undefined);
    for (const [i, ask] of asks.entries()) {
      ask.then((share) => {
        answers[i] = share;
        settled++;
        if (share.failure) failed = true;
        pages += share.pages?.length ?? 0;
        if (settled === asks.length || (!failed && pages === numPages)) resolve(answered());
      }, reject);
    }
  });
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
