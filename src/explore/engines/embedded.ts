import { mkdtempSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { compiledPgliteWasm } from '../../platform/db/index.ts';
import { WORKER_RESOURCE_LIMITS } from '../../platform/worker-heap.ts';
import { createFairQueue, ENGINE_QUEUE_DEFAULTS, EngineQueueError, secondsUntil } from './fairness.ts';
import { EngineError, unapprovedRead, type CatalogColumn, type QueryEngine } from './types.ts';

// The embedded engine: PGlite holding the sample as schema `tiny`, presented as Trino's `tpch.tiny`. Statements run
// in a worker thread, in a read-only transaction, as a role that may only read the sample's tables (walls behind
// validation, which is the one that keeps functions out), and their results are bounded in bytes.
const CATALOG = 'tpch';
const SCHEMA = 'tiny';
const PRINTED_SAMPLE = `"${CATALOG}"."${SCHEMA}".`;

// Keyed by pg_type OID, fixed across PostgreSQL versions (PGlite's own `types` table would load PGlite's whole
// runtime on this thread, where only the workers need it).
const TYPE_NAMES: Record<number, string> = {
  21: 'smallint',
  23: 'integer',
  20: 'bigint',
  1700: 'decimal',
  700: 'real',
  701: 'double',
  16: 'boolean',
  1082: 'date',
  1114: 'timestamp',
  1184: 'timestamp with time zone',
  25: 'varchar',
  1043: 'varchar',
  1042: 'char',
};
const PG_TO_TRINO: Record<string, string> = {
  'character varying': 'varchar',
  text: 'varchar',
  'double precision': 'double',
  numeric: 'decimal',
};

// A small pool of workers, each a PGlite holding the sample (about 100 MB each), so that one slow statement does
// not hold every caller. No worker runs until the first call, and each stops after `idleMs` without one (as the OCR
// and PDF workers do): an idle `svc dev` holds no sample, and the next call starts one again (a few seconds).
// Calls wait in a fair queue here, never inside a worker (fairness.ts): the service's own metadata calls first,
// then users in turn. A user has at most `userConcurrency` calls running or waiting, and one more is refused at once
// (429); a call waits at most `queueTimeoutMs` for a ready worker (503), and its own time limit starts when it starts
// running. A statement past its limit, or a worker that dies, gets its worker replaced.
const METADATA_TIMEOUT_MS = 30_000;
// After a worker failed to start, no other starts for this long: a broken set-up must not loop.
const START_PAUSE_MS = 5000;
// Retry-After when no running call says when a worker frees (the workers are still starting).
const RETRY_WHILE_STARTING_S = 5;
/** How long a worker waits for another call before it stops; the next call starts one again. */
export const SAMPLE_ENGINE_IDLE_MS = 60_000;

type Job = {
  op: string;
  args: object;
  /** undefined: the service's own call (metadata), which no user's cap counts. */
  user: string | undefined;
  timeoutMs: number;
  /** When the call is over at the latest: the end of its wait plus its limit; once running, its start plus its limit. */
  deadline: number;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer?: NodeJS.Timeout;
  settled?: boolean;
};
/** `gone`: the worker has exited and its folder is removed. */
type Slot = { worker: Worker; ready: boolean; gone: Promise<void>; running?: Job; idle?: NodeJS.Timeout };

export type EmbeddedEngineOptions = {
  /**
   * Statements run once the sample is loaded, before any query (tests mark personal values with it, so that anything
   * derived from them is recognisable in an answer).
   */
  afterSample?: string;
  /** SVC_ENGINE_WORKERS: the most workers, started when calls wait and none is free. */
  workers?: number;
  /** SVC_ENGINE_USER_CONCURRENCY: one user's statements running or waiting at once; one more is 'busy'. */
  userConcurrency?: number;
  /** SVC_ENGINE_QUEUE_TIMEOUT_MS: the longest a call waits for a worker before it is refused ('queue_timeout'). */
  queueTimeoutMs?: number;
  /** How long a worker waits for another call before it stops (SAMPLE_ENGINE_IDLE_MS). */
  idleMs?: number;
};

export interface EmbeddedEngine extends QueryEngine {
  /** Workers running now, starting or ready: none before the first call and after `idleMs` without one. */
  readonly running: number;
  /** Workers started since creation: one for the first call, another after each idle stop, crash or cancellation. */
  readonly starts: number;
}

export async function createEmbeddedEngine(opts: EmbeddedEngineOptions = {}): Promise<EmbeddedEngine> {
  const maxWorkers = opts.workers ?? ENGINE_QUEUE_DEFAULTS.workers;
  const userConcurrency = opts.userConcurrency ?? ENGINE_QUEUE_DEFAULTS.userConcurrency;
  const queueTimeoutMs = opts.queueTimeoutMs ?? ENGINE_QUEUE_DEFAULTS.queueTimeoutMs;
  const idleMs = opts.idleMs ?? SAMPLE_ENGINE_IDLE_MS;
  const queue = createFairQueue<Job>();
  const inFlight = new Map<string, Set<Job>>(); // each user's calls, waiting or running
  const slots: Slot[] = [];
  // Calls that came while no worker was ready: their wait for a worker is counted from when one is (a cold start is
  // the engine's own time, seconds on a loaded machine, not a wait behind other callers).
  const cold = new Set<Job>();
  let starts = 0;
  let closed = false;
  let startFailedAt = Number.NEGATIVE_INFINITY;
  const wasm = await compiledPgliteWasm(); // once for every worker this engine starts
  await removeOrphanedSamples();

  function startWorker(): Promise<void> {
    starts++;
    const dataDir = mkdtempSync(join(tmpdir(), `${SAMPLE_FOLDER}${process.pid}-`));
    const worker = new Worker(new URL('./embedded-worker.mjs', import.meta.url), {
      resourceLimits: WORKER_RESOURCE_LIMITS,
      workerData: { afterSample: opts.afterSample ?? '', dataDir, ...wasm },
    });
    const gone = new Promise<void>((resolve) => worker.once('exit', resolve)).then(() =>
      rm(dataDir, { recursive: true, force: true }).catch(() => {}),
    );
    const slot: Slot = { worker, ready: false, gone };
    slots.push(slot);
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (msg: { ready?: boolean; ok: boolean; value: unknown; error: string; kind?: EngineError['kind'] }) => {
        if (msg.ready) {
          slot.ready = true;
          for (const job of cold) armWait(job);
          cold.clear();
          resolve();
          return dispatch();
        }
        const job = slot.running;
        slot.running = undefined;
        if (job)
          settle(job, msg.ok ? { value: msg.value } : { error: msg.kind ? new EngineError(msg.kind, msg.error) : new Error(msg.error) });
        dispatch();
      });
      worker.on('error', (err) => {
        reject(err);
        retire(
          slot,
          new EngineError('unavailable', `The embedded engine failed (${err.message}) and was restarted; send the question again.`),
        );
      });
      worker.on('exit', () => {
        reject(new Error('The embedded engine stopped while starting.'));
        retire(slot, new EngineError('unavailable', 'The embedded engine stopped and was restarted; send the question again.'));
      });
    });
  }

  /**
   * The worker is gone or must go: whatever it was running fails with `reason`; the queue moves to the others. A
   * crashed or cancelled worker is replaced at once (the caller is likely to ask again); an idle one is not.
   */
  function retire(slot: Slot, reason: EngineError, opts: { idle?: boolean } = {}): void {
    const at = slots.indexOf(slot);
    if (at < 0 || closed) return;
    slots.splice(at, 1);
    void slot.worker.terminate();
    const job = slot.running;
    slot.running = undefined;
    if (job) settle(job, { error: reason });
    if (!slot.ready) {
      startFailedAt = Date.now();
      if (slots.length === 0) refuseWaiting();
    } else if (slots.length === 0 && !opts.idle) void startWorker().catch(() => {});
    dispatch();
  }

  function refuseWaiting(): void {
    for (let waiting = queue.shift(); waiting; waiting = queue.shift())
      settle(waiting, { error: new EngineError('unavailable', 'The embedded engine could not start; send the question again.') });
  }

  /** Every ready, idle worker takes the next call; calls still waiting start one more worker, up to the pool's size. */
  function dispatch(): void {
    if (closed) return;
    for (const slot of slots) {
      if (!slot.ready || slot.running) continue;
      const job = queue.shift();
      if (!job) {
        idleOut();
        return;
      }
      run(slot, job);
    }
    if (queue.size === 0 || slots.some((s) => !s.ready) || slots.length >= maxWorkers) return;
    if (Date.now() - startFailedAt > START_PAUSE_MS) void startWorker().catch(() => {});
    else if (slots.length === 0) refuseWaiting(); // none runs, and none may start yet after a failed start
  }

  /** Idle workers stop after `idleMs` without a call; the next calls start them again. */
  function idleOut(): void {
    for (const slot of slots) {
      if (!slot.ready || slot.running || slot.idle) continue;
      slot.idle = setTimeout(() => {
        slot.idle = undefined;
        if (!slot.running && queue.size === 0) retire(slot, new EngineError('unavailable', 'idle'), { idle: true });
      }, idleMs);
      slot.idle.unref();
    }
  }

  /** The call's own time limit starts here, not when it was queued. */
  function run(slot: Slot, job: Job): void {
    clearTimeout(slot.idle);
    slot.idle = undefined;
    clearTimeout(job.timer);
    slot.running = job;
    job.deadline = Date.now() + job.timeoutMs;
    job.timer = setTimeout(() => {
      if (slot.running !== job) return;
      slot.running = undefined;
      settle(job, { error: new EngineError('timeout', `The query ran longer than ${job.timeoutMs} ms and was cancelled.`) });
      // the only way to stop a running PGlite statement: replace the worker
      retire(slot, new EngineError('timeout', 'cancelled'));
    }, job.timeoutMs);
    slot.worker.postMessage({ op: job.op, args: job.args });
  }

  function settle(job: Job, outcome: { value: unknown } | { error: Error }): void {
    if (job.settled) return;
    job.settled = true;
    clearTimeout(job.timer);
    cold.delete(job);
    if (job.user !== undefined) {
      const mine = inFlight.get(job.user);
      mine?.delete(job);
      if (mine?.size === 0) inFlight.delete(job.user);
    }
    if ('error' in outcome) job.reject(outcome.error);
    else job.resolve(outcome.value);
  }

  function call<T>(op: string, args: object, user: string | undefined, timeoutMs: number): Promise<T> {
    if (closed) return Promise.reject(new EngineError('unavailable', 'The embedded engine is closed.'));
    const mine = user === undefined ? undefined : (inFlight.get(user) ?? new Set<Job>());
    if (mine && mine.size >= userConcurrency) return Promise.reject(busy(mine));
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        op,
        args,
        user,
        timeoutMs,
        deadline: Date.now() + queueTimeoutMs + timeoutMs,
        resolve: resolve as (v: unknown) => void,
        reject,
      };
      if (user !== undefined && mine) inFlight.set(user, mine.add(job));
      if (slots.some((s) => s.ready)) armWait(job);
      else cold.add(job);
      queue.push(user, job);
      dispatch();
    });
  }

  /** The call's wait for a worker starts: past `queueTimeoutMs` it is refused without having run. */
  function armWait(job: Job): void {
    job.deadline = Date.now() + queueTimeoutMs + job.timeoutMs;
    job.timer = setTimeout(() => {
      if (queue.remove(job)) settle(job, { error: waitedTooLong() });
    }, queueTimeoutMs);
  }

  function busy(mine: Set<Job>): EngineQueueError {
    const seconds = secondsUntil(
      [...mine].map((j) => j.deadline),
      Date.now(),
      RETRY_WHILE_STARTING_S,
    );
    const yours = mine.size === 1 ? 'a statement' : `${mine.size} statements`;
    return new EngineQueueError(
      'busy',
      `You already have ${yours} running or waiting on the embedded engine, the most one user may have at once (SVC_ENGINE_USER_CONCURRENCY=${userConcurrency}): wait for it to finish (within ${seconds} s), then send the question again.`,
      seconds,
    );
  }

  function waitedTooLong(): EngineQueueError {
    const running = slots.flatMap((s) => (s.running ? [s.running.deadline] : []));
    const seconds = secondsUntil(running, Date.now(), RETRY_WHILE_STARTING_S);
    return new EngineQueueError(
      'queue_timeout',
      `Every embedded engine worker stayed busy for ${queueTimeoutMs} ms (SVC_ENGINE_QUEUE_TIMEOUT_MS), so the statement did not start: send the question again in ${seconds} s.`,
      seconds,
    );
  }

  return {
    kind: 'embedded',
    get running() {
      return slots.length;
    },
    get starts() {
      return starts;
    },
    async columns(catalogs) {
      if (!catalogs.includes(CATALOG)) return [];
      const rows = await call<{ table: string; column: string; type: string }[]>('columns', {}, undefined, METADATA_TIMEOUT_MS);
      return rows.map(
        (r): CatalogColumn => ({ catalog: CATALOG, schema: SCHEMA, table: r.table, column: r.column, type: PG_TO_TRINO[r.type] ?? r.type }),
      );
    },
    async estimateBytes(sql) {
      return (await call<number | null>('estimate', { sql: toEmbeddedNames(sql) }, undefined, METADATA_TIMEOUT_MS)) ?? undefined;
    },
    async scanBound(table) {
      const [catalog, schema, name] = table.split('.');
      if (catalog !== CATALOG || schema !== SCHEMA || !name) return undefined;
      return (await call<number | null>('tableBytes', { table: name }, undefined, METADATA_TIMEOUT_MS)) ?? undefined;
    },
    async execute(sql, caller, opts) {
      try {
        const args = { sql: toEmbeddedNames(sql), maxBytes: opts.maxBytes ?? null, reads: opts.reads };
        const r = await call<{ fields: { name: string; oid: number }[]; rows: unknown[][] }>('execute', args, caller.user, opts.timeoutMs);
        return { columns: r.fields.map((f) => ({ name: f.name, type: TYPE_NAMES[f.oid] ?? 'varchar' })), rows: r.rows };
      } catch (err) {
        if (err instanceof EngineError && (err.kind as string) === 'unapproved') throw unapprovedRead(err.message);
        if (err instanceof EngineError) throw err;
        const message = (err as Error).message;
        if (/read-only transaction/.test(message))
          throw new EngineError('forbidden', 'The embedded engine only reads: the statement tried to write.');
        if (/permission denied/.test(message)) throw new EngineError('forbidden', `The embedded engine refused: ${message}.`);
        throw new EngineError('invalid', message);
      }
    },
    async close() {
      closed = true;
      const gone = new EngineError('unavailable', 'The embedded engine is closed.');
      for (let job = queue.shift(); job; job = queue.shift()) settle(job, { error: gone });
      for (const slot of slots) {
        clearTimeout(slot.idle);
        if (slot.running) settle(slot.running, { error: gone });
      }
      await Promise.all(slots.splice(0).map((slot) => slot.worker.terminate().then(() => slot.gone)));
    },
  };
}

// Each worker unpacks the sample into a folder of its own (the one process that opens it), removed when the worker
// exits; one left by a process that crashed is removed by the next start, which reads the process id in its name.
const SAMPLE_FOLDER = 'svc-sample-';

async function removeOrphanedSamples(): Promise<void> {
  const root = tmpdir();
  for (const name of await readdir(root).catch(() => [])) {
    const pid = Number(new RegExp(`^${SAMPLE_FOLDER}(\\d+)-`).exec(name)?.[1]);
    if (pid && pid !== process.pid && !alive(pid)) await rm(join(root, name), { recursive: true, force: true }).catch(() => {});
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * `tpch.tiny.x` becomes `tiny.x`, and `"tpch"."tiny".` (as engine-statement.ts prints a table) `"tiny".`; string
 * literals and other quoted identifiers are left alone.
 */
export function toEmbeddedNames(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (sql.startsWith(PRINTED_SAMPLE, i)) {
      out += `"${SCHEMA}".`;
      i += PRINTED_SAMPLE.length;
      continue;
    }
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === ch && sql[j + 1] !== ch)) j += sql[j] === ch ? 2 : 1;
      out += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const m = /^tpch\s*\.\s*tiny\s*\./i.exec(sql.slice(i));
    if (m && !/[\w.]/.test(sql[i - 1] ?? ' ')) {
      out += 'tiny.';
      i += m[0].length;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}
