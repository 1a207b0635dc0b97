import { mkdir } from 'node:fs/promises';
import { PGlite, types, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { parseInt8, type Database, type Sql } from './types.ts';

// Embedded Postgres (WASM) with pgvector: one connection, queries queue inside PGlite, and a transaction holds
// the connection until it ends.
export async function openPglite(opts: { dataDir?: string | undefined } = {}): Promise<Database> {
  if (opts.dataDir) await mkdir(opts.dataDir, { recursive: true });
  const db = await PGlite.create({
    ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
    extensions: { vector },
    parsers: { [types.INT8]: parseInt8, [types.NUMERIC]: Number },
  });
  let closed = false;
  const wrap = (conn: PGlite | Transaction): Sql => ({
    async query<T>(text: string, params: readonly unknown[] = []) {
      return (await conn.query<T>(text, params as unknown[])).rows;
    },
    async exec(script: string) {
      await conn.exec(script);
    },
  });
  const base = wrap(db);
  return {
    kind: 'pglite',
    ...base,
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    async ping() {
      if (closed) return false;
      try {
        await db.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}
