import type { Sql } from '../platform/db/index.ts';
import { TrinoError } from '../platform/trino/index.ts';
import type { Lake } from './backends/index.ts';
import * as sql from './backends/lake-sql.ts';

// `svc lake maintain`: the upkeep of lake collections' Iceberg tables. Every upload is one INSERT (a snapshot and a
// few small files) and every delete a position-delete file, so a collection's table gathers files and snapshots that
// every question must plan over. For each lake collection, as the service user: optimize (compaction of the small
// files, deletes applied), expire_snapshots, then remove_orphan_files (files no metadata names, left by failed writes).
// docs/retrieval.md, "Backends".

export type MaintainOptions = {
  /** One collection's slug; without it, every lake collection. */
  collection?: string | undefined;
  /** Snapshots and orphan files younger than this are kept (a Trino duration: `7d`, `12h`, `0s`). */
  retain: string;
  /** Data files smaller than this are rewritten (a Trino data size: `100MB`). */
  fileSizeThreshold: string;
};

type Change = { before: number; after: number };
export type CollectionReport = { collection: string; table: string; seconds: number } & (
  | { ok: true; files: Change; snapshots: Change }
  | { ok: false; error: string }
);

/**
 * Why maintenance could not start or had to stop: no such collection, not a lake collection, or a retention the
 * catalog refuses (its floor holds for every table, so the other collections are not tried).
 */
export class LakeMaintainError extends Error {
  override name = 'LakeMaintainError';
  constructor(
    readonly kind: 'unknown-collection' | 'not-lake' | 'retention-refused',
    message: string,
  ) {
    super(message);
  }
}

/** Trino's duration units (airlift's Duration) and data size units (DataSize). */
const DURATION = /^\d+(\.\d+)?(ns|us|ms|s|m|h|d)$/;
const DATA_SIZE = /^\d+(\.\d+)?(B|kB|MB|GB|TB|PB)$/;
export const isTrinoDuration = (text: string) => DURATION.test(text);
export const isTrinoDataSize = (text: string) => DATA_SIZE.test(text);

/** Runs the maintenance of each collection in turn; one that fails is reported and the others still run. */
export async function maintainLake(
  deps: { db: Sql; lake: Lake },
  opts: MaintainOptions,
  onReport: (report: CollectionReport) => void = () => {},
): Promise<CollectionReport[]> {
  const reports: CollectionReport[] = [];
  for (const { slug, table } of await lakeCollections(deps.db, opts.collection)) {
    const started = performance.now();
    const seconds = () => Math.round(performance.now() - started) / 1000;
    let report: CollectionReport;
    try {
      report = { collection: slug, table, ok: true, ...(await maintainTable(deps.lake, table, opts)), seconds: seconds() };
    } catch (err) {
      if (isRetentionRefused(err))
        throw new LakeMaintainError(
          'retention-refused',
          `--retain ${opts.retain} is shorter than the catalog allows (its iceberg.expire-snapshots.min-retention and ` +
            `iceberg.remove-orphan-files.min-retention, 7d unless set): ${(err as Error).message}`,
        );
      report = { collection: slug, table, ok: false, error: err instanceof Error ? err.message : String(err), seconds: seconds() };
    }
    reports.push(report);
    onReport(report);
  }
  return reports;
}

async function maintainTable(lake: Lake, table: string, opts: MaintainOptions): Promise<{ files: Change; snapshots: Change }> {
  const { schema } = lake.settings;
  const fqn = sql.tableOf(schema, table);
  const count = async (kind: 'files' | 'snapshots') =>
    Number((await lake.asService(sql.countRows(sql.metadataTableOf(schema, table, kind)))).rows[0]?.[0] ?? 0);
  const before = { files: await count('files'), snapshots: await count('snapshots') };
  // compaction first, so the snapshot expiry that follows removes the small files it replaced
  await lake.asService(sql.optimize(fqn, opts.fileSizeThreshold));
  await lake.asService(sql.expireSnapshots(fqn, opts.retain));
  await lake.asService(sql.removeOrphanFiles(fqn, opts.retain));
  return {
    files: { before: before.files, after: await count('files') },
    snapshots: { before: before.snapshots, after: await count('snapshots') },
  };
}

async function lakeCollections(db: Sql, slug: string | undefined): Promise<{ slug: string; table: string }[]> {
  if (slug === undefined) {
    const rows = await db.query<{ slug: string; chunk_store: string }>(
      `SELECT slug, chunk_store FROM retrieval_collections WHERE backend = 'lake' ORDER BY slug`,
    );
    return rows.map((r) => ({ slug: r.slug, table: r.chunk_store }));
  }
  const [row] = await db.query<{ backend: string; chunk_store: string | null }>(
    `SELECT backend, chunk_store FROM retrieval_collections WHERE slug = $1`,
    [slug],
  );
  if (!row) throw new LakeMaintainError('unknown-collection', `collection ${slug} does not exist`);
  if (row.backend !== 'lake' || !row.chunk_store)
    throw new LakeMaintainError(
      'not-lake',
      `collection ${slug} is on the ${row.backend} backend, not the lake: it has no table to maintain`,
    );
  return [{ slug, table: row.chunk_store }];
}

/** Trino's refusal of a retention below the catalog's floor ("Retention specified (1.00h) is shorter than the minimum retention configured in the system (7.00d)"). */
const isRetentionRefused = (err: unknown) =>
  err instanceof TrinoError && err.kind === 'invalid' && /shorter than the minimum retention/i.test(err.message);
