import { Worker } from 'node:worker_threads';
import { types } from '@electric-sql/pglite';
import { EngineError, unapprovedRead, type CatalogColumn, type QueryEngine } from './types.ts';

// The embedded engine: PGlite holding the sample as schema `tiny`, presented as Trino's `tpch.tiny`. Statements run
// in a worker thread, in a read-only transaction, as a role that may only read the sample's tables (walls behind
// validation, which is the one that keeps functions out), and their results are bounded in bytes.
const CATALOG = 'tpch';
const SCHEMA = 'tiny';
const PRINTED_SAMPLE = `"${CATALOG}"."${SCHEMA}".`;

const TYPE_NAMES: Record<number, string> = {
  [types.INT2]: 'smallint',
  [types.INT4]: 'integer',
  [types.INT8]: 'bigint',
  [types.NUMERIC]: 'decimal',
  [types.FLOAT4]: 'real',
  [types.FLOAT8]: 'double',
  [types.BOOL]: 'boolean',
  [types.DATE]: 'date',
  [types.TIMESTAMP]: 'timestamp',
  [types.TIMESTAMPTZ]: 'timestamp with time zone',
  [types.TEXT]: 'varchar',
  [types.VARCHAR]: 'varchar',
  [types.BPCHAR]: 'char',
};
const PG_TO_TRINO: Record<string, string> = {
  'character varying': 'varchar',
  text: 'varchar',
  'double precision': 'double',
  numeric: 'decimal',
};

// One statement runs at a time (PGlite is single-threaded), so calls wait in a queue here, never inside the worker:
// every call has its own time limit, which counts its wait as well. A statement past its limit, or a worker that
// dies, gets the worker replaced; the calls still waiting then run on the new one, and none is ever left pending.
const METADATA_TIMEOUT_MS = 30_000;

type Job = { op: string; args: object; resolve(v: unknown): void; reject(e: Error): void; timer?: NodeJS.Timeout; posted?: boolean };
type Slot = { worker: Worker; ready: Promise<void>; running?: Job };

/**
 * `afterSample`: statements run once the sample is loaded, before any query (tests mark personal values with it, so
 * that anything derived from them is recognisable in an answer).
 */
export async function createEmbeddedEngine(opts: { afterSample?: string } = {}): Promise<QueryEngine> {
  const queue: Job[] = [];
  let slot = startWorker();
  let closed = false;
  await slot.ready;

  function startWorker(): Slot {
    const worker = new Worker(new URL('./embedded-worker.mjs', import.meta.url), { workerData: { afterSample: opts.afterSample ?? '' } });
    const next: Slot = { worker, ready: Promise.resolve() };
    next.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (msg: { ready?: boolean; ok: boolean; value: unknown; error: string; kind?: EngineError['kind'] }) => {
        if (msg.ready) return resolve();
        const job = next.running;
        next.running = undefined;
        if (job)
          settle(job, msg.ok ? { value: msg.value } : { error: msg.kind ? new EngineError(msg.kind, msg.error) : new Error(msg.error) });
        dispatch();
      });
      worker.once('error', reject);
    });
    next.ready.catch(() => {});
    worker.on('error', (err) =>
      replace(
        next,
        new EngineError('unavailable', `The embedded engine failed (${err.message}) and was restarted; send the question again.`),
      ),
    );
    worker.on('exit', () =>
      replace(next, new EngineError('unavailable', 'The embedded engine stopped and was restarted; send the question again.')),
    );
    return next;
  }

  /** The worker is gone or must go: whatever it was running fails with `reason`, the queue moves to a new one. */
  function replace(old: Slot, reason: EngineError): void {
    if (slot !== old || closed) return;
    const job = old.running;
    old.running = undefined;
    slot = startWorker();
    void old.worker.terminate();
    if (job) settle(job, { error: reason });
    void slot.ready.then(dispatch, () => {});
  }

  function dispatch(): void {
    if (closed || slot.running) return;
    const job = queue.shift();
    if (!job) return;
    const current = slot;
    current.running = job;
    void current.ready.then(
      () => {
        if (current.running !== job) return;
        job.posted = true;
        current.worker.postMessage({ op: job.op, args: job.args });
      },
      () => replace(current, new EngineError('unavailable', 'The embedded engine could not start.')),
    );
  }

  function settle(job: Job, outcome: { value: unknown } | { error: Error }): void {
    clearTimeout(job.timer);
    if ('error' in outcome) job.reject(outcome.error);
    else job.resolve(outcome.value);
  }

  function call<T>(op: string, args: object, timeoutMs: number): Promise<T> {
    if (closed) return Promise.reject(new EngineError('unavailable', 'The embedded engine is closed.'));
    return new Promise<T>((resolve, reject) => {
      const job: Job = { op, args, resolve: resolve as (v: unknown) => void, reject };
      job.timer = setTimeout(() => {
        const waiting = queue.indexOf(job);
        if (waiting >= 0) queue.splice(waiting, 1);
        settle(job, { error: new EngineError('timeout', `The query ran longer than ${timeoutMs} ms and was cancelled.`) });
        if (slot.running !== job) return;
        if (!job.posted) {
          slot.running = undefined; // still waiting for the worker to start: give the turn to the next call
          return dispatch();
        }
        // the only way to stop a running PGlite statement: replace the worker
        replace(slot, new EngineError('timeout', 'cancelled'));
      }, timeoutMs);
      queue.push(job);
      dispatch();
    });
  }

  return {
    kind: 'embedded',
    async columns(catalogs) {
      if (!catalogs.includes(CATALOG)) return [];
      const rows = await call<{ table: string; column: string; type: string }[]>('columns', {}, METADATA_TIMEOUT_MS);
      return rows.map(
        (r): CatalogColumn => ({ catalog: CATALOG, schema: SCHEMA, table: r.table, column: r.column, type: PG_TO_TRINO[r.type] ?? r.type }),
      );
    },
    async estimateBytes(sql) {
      return (await call<number | null>('estimate', { sql: toEmbeddedNames(sql) }, METADATA_TIMEOUT_MS)) ?? undefined;
    },
    async scanBound(table) {
      const [catalog, schema, name] = table.split('.');
      if (catalog !== CATALOG || schema !== SCHEMA || !name) return undefined;
      return (await call<number | null>('tableBytes', { table: name }, METADATA_TIMEOUT_MS)) ?? undefined;
    },
    async execute(sql, _caller, opts) {
      try {
        const args = { sql: toEmbeddedNames(sql), maxBytes: opts.maxBytes ?? null, reads: opts.reads };
        const r = await call<{ fields: { name: string; oid: number }[]; rows: unknown[][] }>('execute', args, opts.timeoutMs);
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
      for (const job of queue.splice(0)) settle(job, { error: new EngineError('unavailable', 'The embedded engine is closed.') });
      if (slot.running) settle(slot.running, { error: new EngineError('unavailable', 'The embedded engine is closed.') });
      await slot.worker.terminate();
    },
  };
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
