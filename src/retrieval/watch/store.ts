import type { Sql } from '../../platform/db/index.ts';

// Every SQL statement of watched sources. The lease is a conditional update: of two replicas claiming one watch,
// the database lets exactly one through (Postgres re-checks the condition on the row the other just changed).

export type WatchRow = {
  collection_slug: string;
  uri: string;
  interval_seconds: number;
  set_by: string;
  set_at: Date;
  next_scan_at: Date;
  lease_owner: string | null;
  lease_until: Date | null;
  last_scan_at: Date | null;
  last_error: string | null;
  seen: number;
  ingested: number;
  updated: number;
  deleted: number;
  failed: number;
};

export type FileRow = {
  collection_slug: string;
  uri: string;
  path: string;
  version: string;
  sha256: string | null;
  document_id: string | null;
  owned: boolean;
  status: 'indexed' | 'failed' | 'skipped';
  reason: string | null;
  attempts: number;
  retry_at: Date | null;
};

export type ScanCounts = { seen: number; ingested: number; updated: number; deleted: number; failed: number };

export async function findWatch(sql: Sql, slug: string): Promise<WatchRow | undefined> {
  return (await sql.query<WatchRow>(`SELECT * FROM retrieval_watches WHERE collection_slug = $1`, [slug]))[0];
}

export async function listWatches(sql: Sql): Promise<WatchRow[]> {
  return sql.query<WatchRow>(`SELECT * FROM retrieval_watches ORDER BY collection_slug`);
}

/** Sets or moves a watch; a new URI or interval is scanned at once. */
export async function upsertWatch(sql: Sql, w: { slug: string; uri: string; interval_seconds: number; set_by: string }): Promise<void> {
  await sql.query(
    `INSERT INTO retrieval_watches (collection_slug, uri, interval_seconds, set_by) VALUES ($1, $2, $3, $4)
     ON CONFLICT (collection_slug) DO UPDATE SET uri = excluded.uri, interval_seconds = excluded.interval_seconds,
       set_by = excluded.set_by, set_at = now(), next_scan_at = now(), last_error = NULL`,
    [w.slug, w.uri, w.interval_seconds, w.set_by],
  );
}

/** Stops watching; the documents stay in the collection, no longer followed. */
export async function deleteWatch(sql: Sql, slug: string): Promise<void> {
  await sql.query(`DELETE FROM retrieval_watches WHERE collection_slug = $1`, [slug]);
}

/** Watches due now whose lease is free, soonest first. */
export async function dueWatches(sql: Sql, limit: number): Promise<string[]> {
  const rows = await sql.query<{ collection_slug: string }>(
    `SELECT collection_slug FROM retrieval_watches
     WHERE next_scan_at <= now() AND (lease_until IS NULL OR lease_until < now())
     ORDER BY next_scan_at LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.collection_slug);
}

/** Takes the watch's lease for `owner` if it is due and free; the watch as claimed, or undefined. */
export async function claimWatch(sql: Sql, slug: string, owner: string, leaseSeconds: number): Promise<WatchRow | undefined> {
  const rows = await sql.query<WatchRow>(
    `UPDATE retrieval_watches SET lease_owner = $2, lease_until = now() + $3 * interval '1 second'
     WHERE collection_slug = $1 AND next_scan_at <= now() AND (lease_until IS NULL OR lease_until < now())
     RETURNING *`,
    [slug, owner, leaseSeconds],
  );
  return rows[0];
}

/** Extends the lease; false when it is no longer `owner`'s (expired and taken, or the watch was removed). */
export async function renewLease(sql: Sql, slug: string, owner: string, leaseSeconds: number): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE retrieval_watches SET lease_until = now() + $3 * interval '1 second'
     WHERE collection_slug = $1 AND lease_owner = $2 RETURNING collection_slug`,
    [slug, owner, leaseSeconds],
  );
  return rows.length === 1;
}

/**
 * Records a finished scan of `uri` (or its failure) and frees the lease; the next scan is due one interval on,
 * unless the watch was moved to another URI meanwhile, which stays due at once.
 */
export async function finishScan(
  sql: Sql,
  slug: string,
  owner: string,
  uri: string,
  counts: ScanCounts,
  error: string | null,
): Promise<void> {
  await sql.query(
    `UPDATE retrieval_watches SET lease_owner = NULL, lease_until = NULL, last_scan_at = now(),
       next_scan_at = CASE WHEN uri = $9 THEN now() + interval_seconds * interval '1 second' ELSE next_scan_at END,
       last_error = $3, seen = $4, ingested = $5, updated = $6, deleted = $7, failed = $8
     WHERE collection_slug = $1 AND lease_owner = $2`,
    [slug, owner, error, counts.seen, counts.ingested, counts.updated, counts.deleted, counts.failed, uri],
  );
}

/** Frees the lease without recording a scan (the replica is stopping): the next claim picks up where this left off. */
export async function releaseLease(sql: Sql, slug: string, owner: string): Promise<void> {
  await sql.query(`UPDATE retrieval_watches SET lease_owner = NULL, lease_until = NULL WHERE collection_slug = $1 AND lease_owner = $2`, [
    slug,
    owner,
  ]);
}

export async function listFiles(sql: Sql, slug: string): Promise<FileRow[]> {
  return sql.query<FileRow>(`SELECT * FROM retrieval_watch_files WHERE collection_slug = $1 ORDER BY uri, path`, [slug]);
}

export async function upsertFile(sql: Sql, f: Omit<FileRow, 'retry_at'> & { retry_in_seconds: number | null }): Promise<void> {
  await sql.query(
    `INSERT INTO retrieval_watch_files
       (collection_slug, uri, path, version, sha256, document_id, owned, status, reason, attempts, retry_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + $11 * interval '1 second', now())
     ON CONFLICT (collection_slug, uri, path) DO UPDATE SET version = excluded.version, sha256 = excluded.sha256,
       document_id = excluded.document_id, owned = excluded.owned, status = excluded.status, reason = excluded.reason,
       attempts = excluded.attempts, retry_at = excluded.retry_at, updated_at = now()`,
    [f.collection_slug, f.uri, f.path, f.version, f.sha256, f.document_id, f.owned, f.status, f.reason, f.attempts, f.retry_in_seconds],
  );
}

export async function deleteFile(sql: Sql, slug: string, uri: string, path: string): Promise<void> {
  await sql.query(`DELETE FROM retrieval_watch_files WHERE collection_slug = $1 AND uri = $2 AND path = $3`, [slug, uri, path]);
}

/**
 * Lets go of a document the watch stored, when a file is gone or now holds other bytes: deleted (its chunks go with
 * it) unless another watched file still holds the same bytes, which then owns it. True when it was deleted.
 */
export async function releaseDocument(sql: Sql, slug: string, documentId: string, except: { uri: string; path: string }): Promise<boolean> {
  const heir = await sql.query<{ uri: string; path: string }>(
    `SELECT uri, path FROM retrieval_watch_files
     WHERE collection_slug = $1 AND document_id = $2 AND NOT (uri = $3 AND path = $4) ORDER BY uri, path LIMIT 1`,
    [slug, documentId, except.uri, except.path],
  );
  if (heir[0]) {
    await sql.query(`UPDATE retrieval_watch_files SET owned = true WHERE collection_slug = $1 AND uri = $2 AND path = $3`, [
      slug,
      heir[0].uri,
      heir[0].path,
    ]);
    return false;
  }
  const gone = await sql.query(`DELETE FROM retrieval_documents WHERE id = $1 AND collection_slug = $2 RETURNING id`, [documentId, slug]);
  return gone.length === 1;
}
