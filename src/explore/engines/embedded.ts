import { Worker } from 'node:worker_threads';
import { types } from '@electric-sql/pglite';
import { EngineError, type CatalogColumn, type QueryEngine } from './types.ts';

// The embedded engine: PGlite holding the sample as schema `tiny`, presented as Trino's `tpch.tiny`. Statements run
// in a read-only transaction (a second wall behind validation) in a worker thread, which is terminated and
// replaced when a statement outlives its time limit.
const CATALOG = 'tpch';
const SCHEMA = 'tiny';

const TYPE_NAMES: Record<number, string> = {
  [types.INT2]: 'smallint', [types.INT4]: 'integer', [types.INT8]: 'bigint', [types.NUMERIC]: 'decimal',
  [types.FLOAT4]: 'real', [types.FLOAT8]: 'double', [types.BOOL]: 'boolean', [types.DATE]: 'date',
  [types.TIMESTAMP]: 'timestamp', [types.TIMESTAMPTZ]: 'timestamp with time zone', [types.TEXT]: 'varchar',
  [types.VARCHAR]: 'varchar', [types.BPCHAR]: 'char',
};
const PG_TO_TRINO: Record<string, string> = { 'character varying': 'varchar', text: 'varchar', 'double precision': 'double', numeric: 'decimal' };

type Call = { resolve(v: unknown): void; reject(e: Error): void };

function startWorker(): { worker: Worker; ready: Promise<void>; calls: Map<number, Call> } {
  const worker = new Worker(new URL('./embedded-worker.mjs', import.meta.url));
  const calls = new Map<number, Call>();
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (msg: { ready?: boolean; id: number; ok: boolean; value: unknown; error: string }) => {
      if (msg.ready) return resolve();
      const call = calls.get(msg.id);
      calls.delete(msg.id);
      if (msg.ok) call?.resolve(msg.value);
      else call?.reject(new Error(msg.error));
    });
    worker.once('error', reject);
  });
  worker.on('error', (err) => {
    for (const call of calls.values()) call.reject(err);
    calls.clear();
  });
  return { worker, ready, calls };
}

export async function createEmbeddedEngine(): Promise<QueryEngine> {
  let current = startWorker();
  await current.ready;
  let nextId = 0;

  async function call<T>(op: string, args: object, timeoutMs?: number): Promise<T> {
    const w = current;
    await w.ready;
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          w.calls.delete(id);
          reject(new EngineError('timeout', `The query ran longer than ${timeoutMs} ms and was cancelled.`));
          // the only way to stop a running PGlite statement: replace the worker
          if (current === w) current = startWorker();
          void w.worker.terminate();
        }, timeoutMs);
      }
      w.calls.set(id, {
        resolve: (v) => (clearTimeout(timer), resolve(v as T)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      w.worker.postMessage({ id, op, args });
    });
  }

  return {
    kind: 'embedded',
    async columns(catalogs) {
      if (!catalogs.includes(CATALOG)) return [];
      const rows = await call<{ table: string; column: string; type: string }[]>('columns', {});
      return rows.map((r): CatalogColumn => ({ catalog: CATALOG, schema: SCHEMA, table: r.table, column: r.column, type: PG_TO_TRINO[r.type] ?? r.type }));
    },
    async estimateBytes(sql) {
      return (await call<number | null>('estimate', { sql: toEmbeddedNames(sql) })) ?? undefined;
    },
    async execute(sql, _caller, opts) {
      try {
        const r = await call<{ fields: { name: string; oid: number }[]; rows: unknown[][] }>('execute', { sql: toEmbeddedNames(sql) }, opts.timeoutMs);
        return { columns: r.fields.map((f) => ({ name: f.name, type: TYPE_NAMES[f.oid] ?? 'varchar' })), rows: r.rows };
      } catch (err) {
        if (err instanceof EngineError) throw err;
        const message = (err as Error).message;
        if (/read-only transaction/.test(message)) throw new EngineError('forbidden', 'The embedded engine only reads: the statement tried to write.');
        throw new EngineError('invalid', message);
      }
    },
    async close() {
      await current.worker.terminate();
    },
  };
}

/** `tpch.tiny.x` becomes `tiny.x`; string literals and quoted identifiers are left alone. */
export function toEmbeddedNames(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
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
