import type { Database, Sql } from '../../platform/db/index.ts';
import type { ImportSpec } from './statements.ts';

// An import's rows in Postgres (migration 011_imports): the import, its parts and the claims workers hold on them.

export type ImportRow = {
  id: string;
  collection_slug: string;
  document_id: string;
  spec: ImportSpec;
  spec_digest: string;
  created_by: string;
  created_at: Date;
  status: 'running' | 'done' | 'failed' | 'cancelled';
  error: string | null;
  rows_total: number;
  split_count: number;
  finished_at: Date | null;
  run_started_at: Date;
  run_rows_start: number;
  rows_done: number;
  splits_done: number;
  filename: string;
};

const IMPORT = `SELECT i.id, i.collection_slug, i.document_id, i.spec, i.spec_digest, i.created_by, i.created_at, i.status, i.error,
    i.rows_total::float8 AS rows_total, i.split_count, i.finished_at, i.run_started_at,
    i.run_rows_start::float8 AS run_rows_start, d.filename,
    (SELECT coalesce(sum(rows_done), 0)::float8 FROM retrieval_import_splits s WHERE s.import_id = i.id) AS rows_done,
    (SELECT count(*)::int FROM retrieval_import_splits s WHERE s.import_id = i.id AND s.done) AS splits_done
  FROM retrieval_imports i JOIN retrieval_documents d ON d.id = i.document_id`;

export async function findImport(sql: Sql, slug: string, id: string): Promise<ImportRow | undefined> {
  return (await sql.query<ImportRow>(`${IMPORT} WHERE i.collection_slug = $1 AND i.id = $2`, [slug, id]))[0];
}

/** The import of the same spec into the collection: asked again (even once cancelled or failed), it resumes. */
export async function findImportBySpec(sql: Sql, slug: string, digest: string): Promise<ImportRow | undefined> {
  return (await sql.query<ImportRow>(`${IMPORT} WHERE i.collection_slug = $1 AND i.spec_digest = $2`, [slug, digest]))[0];
}

export async function listImports(sql: Sql, slug: string): Promise<ImportRow[]> {
  return sql.query<ImportRow>(`${IMPORT} WHERE i.collection_slug = $1 ORDER BY i.created_at DESC`, [slug]);
}

/**
 * The import, its document (the rows' home in the collection: listed, deletable, audited like an upload) and its
 * parts, in one transaction. The document's sha256 is the spec's digest, so the same import cannot be created
 * twice by two racing requests: the loser finds the winner's.
 */
export async function insertImport(
  db: Database,
  i: { id: string; slug: string; documentId: string; filename: string; spec: ImportSpec; digest: string; user: string },
  counts: { rowsTotal: number; splitCount: number },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [document] = await tx.query(
      `INSERT INTO retrieval_documents
         (id, collection_slug, filename, content_type, format, size_bytes, sha256, page_count, ocr_pages, status, chunk_count, uploaded_by)
       VALUES ($1, $2, $3, 'application/x-trino-import', 'import', 0, $4, 1, 0, 'IMPORTING', 0, $5)
       ON CONFLICT (collection_slug, sha256) DO NOTHING RETURNING id`,
      [i.documentId, i.slug, i.filename, i.digest, i.user],
    );
    if (!document) return false;
    await tx.query(
      `INSERT INTO retrieval_imports (id, collection_slug, document_id, spec, spec_digest, created_by, rows_total, split_count)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8)`,
      [i.id, i.slug, i.documentId, JSON.stringify(i.spec), i.digest, i.user, counts.rowsTotal, counts.splitCount],
    );
    await tx.query(`INSERT INTO retrieval_import_splits (import_id, split) SELECT $1, s FROM generate_series(0, $2::int - 1) AS s`, [
      i.id,
      counts.splitCount,
    ]);
    return true;
  });
}

/** A worker starts: when no other holds a live claim, the rate is measured from now. */
export async function beginRun(sql: Sql, id: string, staleMs: number): Promise<void> {
  await sql.query(
    `UPDATE retrieval_imports i SET run_started_at = now(),
       run_rows_start = (SELECT coalesce(sum(rows_done), 0) FROM retrieval_import_splits WHERE import_id = i.id)
     WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM retrieval_import_splits s WHERE s.import_id = i.id AND NOT s.done
       AND s.heartbeat > now() - make_interval(secs => $2::float8 / 1000))`,
    [id, staleMs],
  );
}

/**
 * Claims a part nobody holds (or whose holder stopped beating for `staleMs`) among this shard's, for `worker`.
 * Answers the part and whether it was begun before (then it first reads which keys the table holds).
 */
export async function claimSplit(
  sql: Sql,
  id: string,
  worker: string,
  shard: { index: number; count: number },
  staleMs: number,
): Promise<{ split: number; started: boolean } | undefined> {
  const [row] = await sql.query<{ split: number; started: boolean }>(
    `UPDATE retrieval_import_splits s SET worker = $2, heartbeat = now()
     WHERE (s.import_id, s.split) = (
       SELECT import_id, split FROM retrieval_import_splits
       WHERE import_id = $1 AND NOT done AND split % $3 = $4
         AND (worker IS NULL OR heartbeat < now() - make_interval(secs => $5::float8 / 1000))
         AND EXISTS (SELECT 1 FROM retrieval_imports WHERE id = $1 AND status = 'running')
       ORDER BY split LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING s.split, s.started`,
    [id, worker, shard.count, shard.index, staleMs],
  );
  return row;
}

/**
 * How many of a part's rows the table holds now (absolute: a part resumed after a kill counts the rows its killed
 * worker wrote and could not count): set on the part and moved on the document, the collection moves to a new
 * version (its caches are stale), and the claim is renewed. False when the claim was lost or the import stopped.
 */
export async function recordRows(
  sql: Sql,
  i: { id: string; slug: string; documentId: string },
  split: number,
  worker: string,
  rows: number,
): Promise<boolean> {
  const [row] = await sql.query<{ running: boolean }>(
    `WITH old AS (
       SELECT rows_done FROM retrieval_import_splits WHERE import_id = $1 AND split = $3 AND worker = $5
     ), part AS (
       UPDATE retrieval_import_splits SET rows_done = $4, started = true, heartbeat = now()
       WHERE import_id = $1 AND split = $3 AND worker = $5 RETURNING 1
     ), document AS (
       UPDATE retrieval_documents SET chunk_count = chunk_count + $4 - (SELECT rows_done FROM old) WHERE id = $2 AND EXISTS (SELECT 1 FROM part) RETURNING 1
     ), bump AS (
       UPDATE retrieval_collections SET version = version + 1 WHERE slug = $6 AND $4::bigint <> (SELECT rows_done FROM old) RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM part) AND (SELECT status = 'running' FROM retrieval_imports WHERE id = $1) AS running`,
    [i.id, i.documentId, split, rows, worker, i.slug],
  );
  return row?.running === true;
}

/** Marks a part begun before its first file (a kill before any file leaves it to be checked on resume). */
export async function markStarted(sql: Sql, id: string, split: number, worker: string): Promise<void> {
  await sql.query(
    `UPDATE retrieval_import_splits SET started = true, heartbeat = now() WHERE import_id = $1 AND split = $2 AND worker = $3`,
    [id, split, worker],
  );
}

/** A part is whole; the import is done when every part is (its document is then INDEXED). */
export async function finishSplit(sql: Sql, i: { id: string; documentId: string }, split: number, worker: string): Promise<void> {
  await sql.query(
    `UPDATE retrieval_import_splits SET done = true, worker = NULL, heartbeat = NULL WHERE import_id = $1 AND split = $2 AND worker = $3`,
    [i.id, split, worker],
  );
  await sql.query(
    `WITH finished AS (
       UPDATE retrieval_imports SET status = 'done', finished_at = now()
       WHERE id = $1 AND status = 'running' AND NOT EXISTS (SELECT 1 FROM retrieval_import_splits WHERE import_id = $1 AND NOT done)
       RETURNING 1)
     UPDATE retrieval_documents SET status = 'INDEXED' WHERE id = $2 AND EXISTS (SELECT 1 FROM finished)`,
    [i.id, i.documentId],
  );
}

/** Lets go of a part (the worker stops): another may claim it at once. */
export async function releaseSplit(sql: Sql, id: string, split: number, worker: string): Promise<void> {
  await sql.query(
    `UPDATE retrieval_import_splits SET worker = NULL, heartbeat = NULL WHERE import_id = $1 AND split = $2 AND worker = $3`,
    [id, split, worker],
  );
}

/** Stops a running import (failed, cancelled), or runs a stopped one again; false when it was not in a state to. */
export async function setStatus(sql: Sql, id: string, status: 'failed' | 'cancelled' | 'running', error?: string): Promise<boolean> {
  const from = status === 'running' ? ['failed', 'cancelled'] : ['running'];
  const rows = await sql.query(
    `UPDATE retrieval_imports SET status = $2, error = $3, finished_at = CASE WHEN $2 = 'running' THEN NULL ELSE now() END
     WHERE id = $1 AND status = ANY($4::text[]) RETURNING 1`,
    [id, status, error ?? null, from],
  );
  return rows.length > 0;
}

/** Whether parts of this shard are not whole yet (held by another worker, or not begun). */
export async function shardLeft(sql: Sql, id: string, shard: { index: number; count: number }): Promise<boolean> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM retrieval_import_splits WHERE import_id = $1 AND NOT done AND split % $2 = $3`,
    [id, shard.count, shard.index],
  );
  return (row?.n ?? 0) > 0;
}

export async function importStatus(sql: Sql, id: string): Promise<ImportRow['status'] | undefined> {
  return (await sql.query<{ status: ImportRow['status'] }>(`SELECT status FROM retrieval_imports WHERE id = $1`, [id]))[0]?.status;
}
