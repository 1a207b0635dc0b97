// The embedded database in a worker thread of its own (pglite-threaded.ts is the other side): PGlite runs each
// statement synchronously, so on the thread that answers HTTP one slow statement would stop every service in the
// process. Plain JavaScript so that it runs the same under Node, tsx, vitest and Bun.
//
// Messages in: { id, op, tx?, args }; out: { id, ok: true, value } or { id, ok: false, error }. The other side posts
// one statement at a time, or the statements of the one open transaction: the order is its to keep, not ours.
import { mkdir } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { OID, parseInt8, parseNumeric, parseTimestamp } from './parsers.mjs';
import { createPrepared } from './pglite-prepared.mjs';

/** A database error as plain data: structured clone keeps an Error's message but not its code or severity. */
function plainError(err) {
  if (!(err instanceof Error)) return { message: String(err) };
  const fields = { name: err.name, message: err.message };
  for (const [key, value] of Object.entries(err)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return fields;
}

let db;
try {
  if (workerData.dataDir) await mkdir(workerData.dataDir, { recursive: true });
  const options = {
    extensions: { vector },
    // compiled once by the other side, for every worker of the process
    pgliteWasmModule: workerData.pgliteWasmModule,
    initdbWasmModule: workerData.initdbWasmModule,
    parsers: { [OID.int8]: parseInt8, [OID.numeric]: parseNumeric, [OID.timestamp]: parseTimestamp },
  };
  db = await createPrepared(PGlite, workerData.dataDir ? { ...options, dataDir: workerData.dataDir } : options, {
    key: 'a new cluster',
  });
  // PGlite takes its zone from the process; the port promises UTC on both adapters.
  await db.exec(`SET TIME ZONE 'UTC'`);
} catch (err) {
  parentPort.postMessage({ ready: false, error: plainError(err) });
  process.exit(1);
}

/** Open transactions by id: PGlite's transaction object, and how to end it. */
const open = new Map();
let lastTx = 0;
const ROLLBACK = Symbol('rollback');

const ops = {
  async query(conn, { text, params }) {
    return (await conn.query(text, params)).rows;
  },
  async exec(conn, { script }) {
    await conn.exec(script);
  },
  // PGlite reads COPY input from a blob, whole
  async copyIn(conn, { target, bytes }) {
    await conn.query(`COPY ${target} FROM '/dev/blob' (FORMAT binary)`, [], { blob: new Blob([bytes]) });
  },
  // PGlite writes COPY output to a blob, whole. A COPY that fails leaves what it wrote in the device, ahead of the
  // next COPY's output: an empty COPY takes it out.
  async copyOut(conn, { select }) {
    let result;
    try {
      result = await conn.query(`COPY (${select}) TO '/dev/blob' (FORMAT binary)`);
    } catch (error) {
      await conn.query(`COPY (SELECT 1 WHERE false) TO '/dev/blob'`).catch(() => {});
      throw error;
    }
    if (!result.blob) throw new Error('COPY TO /dev/blob returned no data');
    return new Uint8Array(await result.blob.arrayBuffer());
  },
  // Holds PGlite's transaction open until `commit` or `rollback` names it; answers with its id once BEGIN has run.
  begin() {
    return new Promise((started, failed) => {
      const id = ++lastTx;
      const entry = {};
      entry.ended = db
        .transaction(
          (tx) =>
            new Promise((commit, rollback) => {
              Object.assign(entry, { tx, commit, rollback });
              open.set(id, entry);
              started(id);
            }),
        )
        .finally(() => open.delete(id));
      entry.ended.catch(failed); // BEGIN itself failed (after it ran, `started` has settled and this does nothing)
    });
  },
  async commit(_conn, _args, tx) {
    const entry = transaction(tx);
    entry.commit();
    await entry.ended;
  },
  async rollback(_conn, _args, tx) {
    const entry = transaction(tx);
    entry.rollback(ROLLBACK);
    await entry.ended.catch((err) => {
      if (err !== ROLLBACK) throw err;
    });
  },
  async close() {
    await db.close();
  },
};

function transaction(id) {
  const entry = open.get(id);
  if (!entry) throw new Error(`transaction ${id} is not open`);
  return entry;
}

parentPort.on('message', async ({ id, op, tx, args }) => {
  try {
    const conn = tx === undefined ? db : transaction(tx).tx;
    const value = await ops[op](conn, args ?? {}, tx);
    parentPort.postMessage({ id, ok: true, value }, value instanceof Uint8Array ? [value.buffer] : []);
  } catch (err) {
    parentPort.postMessage({ id, ok: false, error: plainError(err) });
  }
});
parentPort.postMessage({ ready: true });
