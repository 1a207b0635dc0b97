import { mkdir } from 'node:fs/promises';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import type { Database, Sql } from './types.ts';
import { createPrepared } from './pglite-prepared.mjs';
import { answersSoon } from './timeout.ts';
import { OID, parseInt8, parseNumeric, parseTimestamp } from './values.ts';

// Embedded Postgres (WASM) with pgvector on the calling thread: one connection. PGlite queues every query and every
// transaction behind one lock, so concurrent calls are safe and a transaction holds the connection until it ends.
// A statement holds the thread while it runs, so the services use the worker (pglite-threaded.ts); this one is for
// tools and tests that ask for it (openPglite({ inWorker: false })).
export async function openPglite(opts: { dataDir?: string | undefined } = {}): Promise<Database> {
  if (opts.dataDir) await mkdir(opts.dataDir, { recursive: true });
  const options = {
    extensions: { vector },
    parsers: { [OID.int8]: parseInt8, [OID.numeric]: parseNumeric, [OID.timestamp]: parseTimestamp },
  };
  const db = await createPrepared(PGlite, opts.dataDir ? { ...options, dataDir: opts.dataDir } : options, { key: 'a new cluster' });
  // PGlite takes its zone from the process; the port promises UTC on both adapters.
  await db.exec(`SET TIME ZONE 'UTC'`);
  let closed = false;
  const wrap = (conn: PGlite | Transaction): Sql => ({
    async query<T>(text: string, params: readonly unknown[] = []) {
      return (await conn.query<T>(text, params as unknown[])).rows;
    },
    async exec(script: string) {
      await conn.exec(script);
    },
    // PGlite reads COPY input from a blob, whole
    async copyIn(target: string, input: Iterable<Uint8Array>) {
      await conn.query(`COPY ${target} FROM '/dev/blob' (FORMAT binary)`, [], { blob: new Blob(Array.from(input) as BlobPart[]) });
    },
  });
  const base = wrap(db);
  return {
    kind: 'pglite',
    query: base.query,
    exec: base.exec,
    copyIn: base.copyIn,
    // PGlite writes COPY output to a blob, whole: one piece. A COPY that fails leaves what it wrote in the device,
    // ahead of the next COPY's output: an empty COPY takes it out.
    async copyOut(select: string, onChunk: (chunk: Uint8Array) => void) {
      let result;
      try {
        result = await db.query(`COPY (${select}) TO '/dev/blob' (FORMAT binary)`);
      } catch (error) {
        await db.query(`COPY (SELECT 1 WHERE false) TO '/dev/blob'`).catch(() => {});
        throw error;
      }
      if (!result.blob) throw new Error('COPY TO /dev/blob returned no data');
      onChunk(new Uint8Array(await result.blob.arrayBuffer()));
    },
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    async ping() {
      if (closed) return false;
      return answersSoon(db.query('SELECT 1'));
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}
