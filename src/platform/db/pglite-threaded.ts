import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from '../worker-heap.ts';
import { joined } from './copy.ts';
import { DEFAULT_STATEMENT_TIMEOUT_MS, answersSoon, withTimeout } from './timeout.ts';
import type { Database, Sql } from './types.ts';

// Embedded PGlite in a worker thread (pglite-worker.mjs), behind the same port as Postgres: a slow statement holds
// the worker, never the thread that answers HTTP. PGlite is one connection, so calls take turns here: one statement
// at a time, or the statements of the one open transaction until it commits or rolls back. Values cross the
// boundary by structured clone, which keeps Dates, Uint8Arrays and bigints as they are.
//
// Every statement has a time limit (SVC_DB_STATEMENT_TIMEOUT_MS). PGlite cannot interrupt a statement, and ending
// the worker mid-write could leave a data folder half-written, so a statement past its limit is left to finish:
// its caller gets a timeout error at once (SQLSTATE 57014, as Postgres's statement_timeout), and until it finishes
// every new call is refused at once with 57P03 (the database is busy), which the services answer with 503 and
// Retry-After. A call that waits its turn longer than the limit is refused with 57P03 as well.

type Op = 'query' | 'exec' | 'copyIn' | 'copyOut' | 'begin' | 'commit' | 'rollback';
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: Record<string, unknown> & { message: string } };
type Call = {
  op: Op;
  args: object;
  tx?: number;
  transfer?: ArrayBuffer[];
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer?: NodeJS.Timeout;
  /** A commit or rollback: the transaction it ends. */
  ends?: number;
};

/** A database error as the adapters throw it: `code` is the SQLSTATE and `severity` is set, so sqlState() reads it. */
function databaseError(fields: Record<string, unknown> & { message: string }): Error {
  const { message, name, ...rest } = fields;
  const err = Object.assign(new Error(message), rest);
  if (typeof name === 'string' && name !== 'Error') err.name = name;
  return err;
}

const timedOut = (ms: number) =>
  databaseError({
    message: `The statement ran longer than ${ms} ms (SVC_DB_STATEMENT_TIMEOUT_MS). The embedded database cannot interrupt it: it finishes on its own, and new statements are refused until it has.`,
    code: '57014',
    severity: 'ERROR',
  });

const busy = (why: string) =>
  databaseError({ message: `The embedded database is busy: ${why}; try again shortly.`, code: '57P03', severity: 'ERROR' });

export async function openPgliteInWorker(
  opts: { dataDir?: string | undefined; statementTimeoutMs?: number | undefined } = {},
): Promise<Database> {
  const limit = opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), {
    resourceLimits: WORKER_RESOURCE_LIMITS,
    workerData: { dataDir: opts.dataDir, ...(await compiledWasm()) },
  });
  const sent = new Map<number, Call>();
  /** Calls answered with a timeout whose statement still runs: while any does, new calls are refused. */
  const late = new Set<number>();
  /** Top-level calls and transactions waiting for their turn. */
  const queue: { call: Call; waited: NodeJS.Timeout }[] = [];
  /** What holds the database: a top-level call, an open transaction (its id), or nothing. */
  let holder: { call: number } | { tx: number } | undefined;
  let lastId = 0;
  let closed = false;
  let stopped: Error | undefined;

  await new Promise<void>((resolve, reject) => {
    const onMessage = (msg: { ready?: boolean; error?: Record<string, unknown> & { message: string } }) => {
      if (msg.ready === undefined) return;
      worker.off('message', onMessage);
      if (msg.ready) resolve();
      else reject(databaseError(msg.error ?? { message: 'the embedded database could not start' }));
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the embedded database's worker stopped while starting (exit code ${code})`)));
  });
  worker.removeAllListeners('error').removeAllListeners('exit');
  worker.on('message', (reply: Reply) => answered(reply));
  worker.on('error', (err) => stop(new Error(`The embedded database failed (${err.message}); restart the service.`)));
  worker.on('exit', () => stop(new Error('The embedded database stopped; restart the service.')));
  // The worker keeps the process alive only while a call is in flight, as a socket would.
  worker.unref();

  function answered(reply: Reply): void {
    const call = sent.get(reply.id);
    const wasLate = late.delete(reply.id);
    sent.delete(reply.id);
    if (holder && 'call' in holder && holder.call === reply.id) {
      holder = undefined;
      // an open transaction holds the database from BEGIN on; one whose caller gave up on it is rolled back
      if (call?.op === 'begin' && reply.ok) {
        const tx = reply.value as number;
        holder = { tx };
        if (wasLate) void ended(tx, 'rollback').catch(() => {});
      }
    }
    if (call) {
      clearTimeout(call.timer);
      if (reply.ok) call.resolve(reply.value);
      else call.reject(databaseError(reply.error));
    }
    if (call?.ends !== undefined && holder && 'tx' in holder && holder.tx === call.ends) holder = undefined;
    if (sent.size === 0) worker.unref();
    next();
  }

  /** The worker is gone: every call fails now and later (the data folder stays as the last statement left it). */
  function stop(reason: Error): void {
    if (stopped) return;
    stopped = reason;
    for (const { call, waited } of queue.splice(0)) {
      clearTimeout(waited);
      call.reject(reason);
    }
    for (const call of sent.values()) {
      clearTimeout(call.timer);
      call.reject(reason);
    }
    sent.clear();
  }

  function post(call: Call): number | undefined {
    const id = ++lastId;
    sent.set(id, call);
    worker.ref();
    call.timer = setTimeout(() => {
      late.add(id);
      call.reject(timedOut(limit));
      // the calls waiting behind it would wait for a statement of unknown length: refuse them now
      for (const { call: waiting, waited } of queue.splice(0)) {
        clearTimeout(waited);
        waiting.reject(busy('a statement that passed its time limit is still running'));
      }
    }, limit);
    try {
      worker.postMessage({ id, op: call.op, tx: call.tx, args: call.args }, call.transfer ?? []);
    } catch (err) {
      // a parameter that cannot cross (a function, a class instance's methods): nothing was sent
      sent.delete(id);
      clearTimeout(call.timer);
      call.reject(err as Error);
      return undefined;
    }
    return id;
  }

  /** Starts the next waiting call when nothing holds the database. */
  function next(): void {
    while (!holder && !stopped && queue.length > 0) {
      const first = queue.shift()!;
      clearTimeout(first.waited);
      const id = post(first.call);
      if (id !== undefined) holder = { call: id };
    }
  }

  function refusal(): Error | undefined {
    if (stopped) return stopped;
    if (closed) return new Error('The database is closed.');
    if (late.size > 0) return busy('a statement that passed its time limit is still running');
    return undefined;
  }

  /** A top-level call: waits for its turn (at most the time limit), then holds the database until answered. */
  function call<T>(op: Op, args: object, transfer?: ArrayBuffer[]): Promise<T> {
    const refused = refusal();
    if (refused) return Promise.reject(refused);
    return new Promise<T>((resolve, reject) => {
      const call: Call = { op, args, resolve: resolve as (v: unknown) => void, reject, ...(transfer ? { transfer } : {}) };
      const entry = {
        call,
        waited: setTimeout(() => {
          queue.splice(queue.indexOf(entry), 1);
          reject(busy(`this call waited ${limit} ms (SVC_DB_STATEMENT_TIMEOUT_MS) for its turn`));
        }, limit),
      };
      entry.waited.unref();
      queue.push(entry);
      next();
    });
  }

  /** A call inside the open transaction `tx`: sent at once, since the transaction holds the database. */
  function inTransaction<T>(tx: number, op: Op, args: object, transfer?: ArrayBuffer[]): Promise<T> {
    if (stopped) return Promise.reject(stopped);
    return new Promise<T>((resolve, reject) => {
      post({ op, args, tx, resolve: resolve as (v: unknown) => void, reject, ...(transfer ? { transfer } : {}) });
    });
  }

  /** Commits or rolls back `tx`; the database is free for the next call once the worker has answered. */
  function ended(tx: number, op: 'commit' | 'rollback'): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const id = post({ op, args: {}, tx, resolve: () => resolve(), reject, ends: tx });
      if (id === undefined) holder = undefined;
    });
  }

  const statements = (send: <T>(op: Op, args: object, transfer?: ArrayBuffer[]) => Promise<T>): Sql => ({
    query: (text, params = []) => send('query', { text, params }),
    exec: (script) => send('exec', { script }),
    async copyIn(target, input) {
      // read on this side (an input that throws fails here, before anything is written), sent whole; the bytes
      // are a copy of our own, so handing their buffer to the worker leaves the caller's untouched
      const parts = Array.from(input);
      const bytes = parts.length === 1 ? parts[0]!.slice() : joined(parts);
      await send('copyIn', { target, bytes }, [bytes.buffer as ArrayBuffer]);
    },
  });
  const base = statements(call);

  return {
    kind: 'pglite',
    ...base,
    async copyOut(select, onChunk) {
      onChunk(await call<Uint8Array>('copyOut', { select }));
    },
    async transaction(fn) {
      const tx = await call<number>('begin', {});
      let result;
      try {
        result = await fn(statements((op, args, transfer) => inTransaction(tx, op, args, transfer)));
      } catch (err) {
        await ended(tx, 'rollback').catch(() => {});
        throw err;
      }
      await ended(tx, 'commit');
      return result;
    },
    async ping() {
      if (refusal()) return false;
      return answersSoon(base.query('SELECT 1'));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const { call, waited } of queue.splice(0)) {
        clearTimeout(waited);
        call.reject(new Error('The database is closed.'));
      }
      if (!stopped) {
        // PGlite closes after the statement it runs, which keeps a data folder whole; bounded by the time limit
        const shut = new Promise<void>((resolve) => {
          const id = ++lastId;
          sent.set(id, { op: 'exec', args: {}, resolve: () => resolve(), reject: () => resolve() });
          worker.ref();
          worker.postMessage({ id, op: 'close' });
        });
        await withTimeout(shut, limit, undefined);
      }
      await worker.terminate();
    },
  };
}

let compiling: Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module }> | undefined;

/**
 * PGlite's two WASM modules, compiled once per process and handed to each worker (a compiled module crosses to a
 * worker without a copy): compiling them again in every worker cost about 2 s of CPU per database opened.
 */
/** PGlite's two wasm modules, compiled once a process for every worker that opens a cluster (structured clone shares them). */
export function compiledWasm() {
  compiling ??= (async () => {
    const dist = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all(
      ['pglite.wasm', 'initdb.wasm'].map(async (name) => WebAssembly.compile(await readFile(join(dist, name)))),
    );
    return { pgliteWasmModule: pgliteWasmModule!, initdbWasmModule: initdbWasmModule! };
  })();
  return compiling;
}
