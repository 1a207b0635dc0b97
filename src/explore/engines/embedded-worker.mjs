// The embedded engine's database, in a worker thread of its own: PGlite runs a statement synchronously and cannot
// be interrupted, so a statement past its time limit is stopped by terminating this worker. Plain JavaScript so
// that it runs the same under Node, tsx and vitest.
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, types } from '@electric-sql/pglite';
import { createPrepared } from '../../platform/db/pglite-prepared.mjs';
import { rowBytes } from './row-bytes.mjs';

const SCHEMA = 'tiny';
const sample = await readFile(new URL('./tpch-tiny.sql', import.meta.url), 'utf8');
// Statements run as a role that can only read the sample's tables: no files, no settings, no other schema's rows,
// and no catalog: pg_stats alone holds a histogram of every column's values. (PGlite's session user stays a
// superuser, so this is a wall behind validation's function allow-list and the plan's check, not instead.)
const sampleRole = `CREATE ROLE svc_sample NOLOGIN; GRANT USAGE ON SCHEMA ${SCHEMA} TO svc_sample;
  GRANT SELECT ON ALL TABLES IN SCHEMA ${SCHEMA} TO svc_sample;
  REVOKE ALL ON ALL TABLES IN SCHEMA pg_catalog FROM PUBLIC;
  REVOKE ALL ON ALL TABLES IN SCHEMA information_schema FROM PUBLIC`;
const afterSample = workerData?.afterSample ?? '';
// Loading the sample is most of a worker's start: the loaded cluster is cached (pglite-prepared.mjs). It is unpacked
// into the worker's own folder (workerData.dataDir, made and removed by embedded.ts), not into PGlite's in-memory
// file system: there its 70 MB of files, and the tarball they came from, stayed in the worker's memory.
const db = await createPrepared(
  PGlite,
  {
    ...(workerData?.dataDir ? { dataDir: workerData.dataDir } : {}),
    parsers: { [types.INT8]: (v) => Number(v), [types.NUMERIC]: Number, [types.DATE]: (v) => v },
    ...(workerData?.pgliteWasmModule
      ? { pgliteWasmModule: workerData.pgliteWasmModule, initdbWasmModule: workerData.initdbWasmModule }
      : {}),
  },
  {
    key: ['explore sample', sample, afterSample, sampleRole].join('\n'),
    async prepare(db) {
      await db.exec(sample);
      if (afterSample) await db.exec(afterSample);
      await db.exec(sampleRole);
    },
  },
);

const handlers = {
  async columns() {
    const r = await db.query(
      `SELECT table_name AS "table", column_name AS "column", data_type AS type FROM information_schema.columns
       WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
      [SCHEMA],
    );
    return r.rows;
  },
  async estimate({ sql }) {
    let plan;
    try {
      plan = await db.query(`EXPLAIN (FORMAT JSON) ${sql}`);
    } catch {
      return null;
    }
    const relations = new Set();
    const walk = (node) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        if (typeof node['Relation Name'] === 'string') relations.add(node['Relation Name']);
        Object.values(node).forEach(walk);
      }
    };
    walk(plan.rows[0]?.['QUERY PLAN']);
    if (relations.size === 0) return 0;
    const sizes = await db.query(
      `SELECT coalesce(sum(pg_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname = ANY($2::text[])`,
      [SCHEMA, [...relations]],
    );
    return Number(sizes.rows[0]?.bytes ?? 0);
  },
  // The size `estimate` counts for a table, whatever the statement reads of it: the bound of one scan.
  async tableBytes({ table }) {
    const r = await db.query(
      `SELECT pg_relation_size(c.oid)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind = 'r'`,
      [SCHEMA, table],
    );
    return r.rows[0] ? Number(r.rows[0].bytes) : null;
  },
  // `reads`: the tables validation approved, as Trino names them. The plan, made in the very transaction and role
  // that run the statement, must read nothing else.
  async execute({ sql, maxBytes, reads }) {
    return db.transaction(async (tx) => {
      await tx.exec(`SET TRANSACTION READ ONLY; SET LOCAL search_path = ${SCHEMA}; SET LOCAL ROLE svc_sample`);
      const plan = await tx.query(`EXPLAIN (FORMAT JSON, VERBOSE) ${sql}`);
      const unapproved = relationsIn(plan.rows[0]?.['QUERY PLAN']).find((r) => !reads.includes(r));
      if (unapproved) throw new EngineRefusal('unapproved', unapproved);
      const result = await tx.query(sql, [], { rowMode: 'array' });
      await tx.rollback();
      if (maxBytes !== null) {
        let bytes = 0;
        for (const row of result.rows) if ((bytes += rowBytes(row)) > maxBytes) throw tooLarge(maxBytes);
      }
      return { fields: result.fields.map((f) => ({ name: f.name, oid: f.dataTypeID })), rows: result.rows };
    });
  },
};

/** Every relation a plan scans, `tpch.tiny.t` for the sample's tables and `schema.t` for any other. */
function relationsIn(plan) {
  const out = new Set();
  const walk = (node) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      if (typeof node['Relation Name'] === 'string') {
        const schema = node.Schema ?? '?';
        out.add(schema === SCHEMA ? `tpch.${SCHEMA}.${node['Relation Name']}` : `${schema}.${node['Relation Name']}`);
      }
      Object.values(node).forEach(walk);
    }
  };
  walk(plan);
  return [...out];
}

class EngineRefusal extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}
const tooLarge = (limit) =>
  new EngineRefusal(
    'too_large',
    `The result is larger than ${limit} bytes (SVC_MAX_RESULT_BYTES): select fewer rows or columns, or aggregate.`,
  );

// One message at a time: the engine never posts the next call before this one is answered.
parentPort.on('message', async ({ op, args }) => {
  try {
    parentPort.postMessage({ ok: true, value: await handlers[op](args) });
  } catch (err) {
    parentPort.postMessage({ ok: false, error: String(err?.message ?? err), kind: err?.kind });
  }
});
parentPort.postMessage({ ready: true });
