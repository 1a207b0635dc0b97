import { createHash, randomUUID } from 'node:crypto';
import { registerEmbeddedColumn } from '../../platform/embedded-columns/index.ts';
import { badRequest, conflict, notFound, unprocessable } from '../../platform/errors.ts';
import type { Caller } from '../../platform/identity.ts';
import { TrinoError } from '../../platform/trino/index.ts';
import { requireAllowed, requireVisible } from '../access.ts';
import { tableOf } from '../backends/lake-sql.ts';
import type { Lake } from '../backends/lake.ts';
import type { RetrievalDeps } from '../deps.ts';
import * as collections from '../store.ts';
import { refusePersonalColumns } from './personal.ts';
import { runImportWorkers, type ImportWorkerDeps, type Shard } from './run.ts';
import * as sql from './statements.ts';
import * as store from './store.ts';

// Imports (issue 32, item 3): the rows of a Trino table or query the caller may read, embedded into a lake
// collection. Asked through `POST /collections/{slug}/imports` (workers in the service) or `svc embed` (workers in the
// command's own process, any number of them, in shards). docs/retrieval.md, "Imports".

export type ImportInput = { source: string; text: string; key: string; metadata?: string[] | undefined };

export type ImportView = {
  import_id: string;
  collection: string;
  document_id: string;
  source: string;
  text: string;
  key: string;
  metadata: string[];
  status: store.ImportRow['status'];
  error: string | null;
  rows_total: number;
  rows_done: number;
  parts: number;
  parts_done: number;
  /** Rows a second since the workers last started. */
  rate_per_second: number | null;
  /** Seconds left at that rate; null before there is a rate, 0 once done. */
  eta_seconds: number | null;
  created_by: string;
  created_at: string;
  finished_at: string | null;
};

/** Columns of the collections' tables, which a metadata column may not shadow. */
const TABLE_COLUMNS = new Set([
  'chunk_id',
  'document_id',
  'file_name',
  'page',
  'chunk_index',
  'text',
  'embedding',
  'created',
  'seq',
  'import_key',
  'import_bucket',
]);
const COLUMN = /^[a-z_][a-z0-9_]*$/;

/** What imports need of retrieval's dependencies: the service's, or those `svc embed` opens. */
export type ImportDeps = Pick<RetrievalDeps, 'config' | 'db' | 'policy' | 'lake' | 'embedder' | 'limiter' | 'logger'>;

export function workerDeps(deps: ImportDeps & { lake: Lake }): ImportWorkerDeps {
  const c = deps.config;
  return {
    db: deps.db,
    lake: deps.lake,
    embedder: deps.embedder,
    limiter: deps.limiter,
    logger: deps.logger,
    settings: {
      fileRows: c.RAG_IMPORT_FILE_ROWS,
      concurrency: c.RAG_IMPORT_CONCURRENCY,
      batchSize: c.EMBED_BATCH_SIZE,
      claimTimeoutMs: c.RAG_IMPORT_CLAIM_TIMEOUT_MS,
    },
  };
}

/**
 * Creates the import (or finds the same one, asked before, and runs it again): the collection must be on the lake and
 * the caller may upload to it; the source is counted, and its metadata columns typed, as the caller on Trino, so a
 * source Trino's rules keep from the caller is refused before anything is written. `created` is false for an import
 * that already existed.
 */
export async function prepareImport(deps: ImportDeps, caller: Caller, slug: string, input: ImportInput) {
  const collection = await requireVisible(deps.policy, caller, slug, await collections.findCollection(deps.db, slug));
  await requireAllowed(deps.policy, caller, 'upload', collection);
  if (collection.backend !== 'lake' || !collection.chunk_store)
    // the request is well formed; the collection is not where an import can go (409: its state, not the request)
    throw conflict(`Imports write to a lake collection's table; '${slug}' is on the ${collection.backend} backend.`);
  const lake = deps.lake;
  if (!lake) throw conflict(`Collection '${slug}' is on the lake, and this service has no Trino (SVC_TRINO_URL).`);
  const spec = checkSpec(input);
  // before the same import is found: whoever resumes it reads the source with their own rights
  await readSource(() => refusePersonalColumns(deps.config, lake, caller, spec));
  const digest = createHash('sha256').update(JSON.stringify(spec)).digest('hex');
  const known = await store.findImportBySpec(deps.db, slug, digest);
  if (known) {
    if (known.status !== 'done') await store.setStatus(deps.db, known.id, 'running');
    return { row: (await store.findImport(deps.db, slug, known.id))!, created: false, lake };
  }
  const fqn = tableOf(lake.settings.schema, collection.chunk_store);
  const columns = await readSource(() => lake.asCaller(caller, sql.describeMetadata(spec)));
  const metadata = spec.metadata.map((name, i) => ({ name, type: sql.lakeType(columns.columns[i]?.type ?? 'varchar') }));
  const total = Number((await readSource(() => lake.asCaller(caller, sql.countRows(spec)))).rows[0]?.[0] ?? 0);
  for (const statement of sql.addImportColumns(fqn, metadata)) await lake.asService(statement);
  const id = randomUUID();
  const inserted = await store.insertImport(
    deps.db,
    {
      id,
      slug,
      documentId: randomUUID(),
      filename: spec.source,
      spec: { ...spec, columns: metadata } as sql.ImportSpec,
      digest,
      user: caller.user,
    },
    { rowsTotal: total, splitCount: splitCount(total, deps.config.RAG_IMPORT_PART_ROWS) },
  );
  const row = inserted ? await store.findImport(deps.db, slug, id) : await store.findImportBySpec(deps.db, slug, digest);
  // explore's semantic_distance finds a table column's embeddings here (docs/explore.md, "Hybrid SQL")
  if (inserted && row)
    await registerEmbeddedColumn(deps.db, {
      importId: id,
      documentId: row.document_id,
      collection: slug,
      source: spec.source,
      text: spec.text,
      key: spec.key,
      lakeTable: fqn,
      model: deps.embedder.model,
      dim: deps.embedder.dim,
    });
  return { row: row!, created: inserted, lake };
}

/** `POST …/imports`: the import, its workers started in this service (none: `svc embed --import` runs it); they run on after the answer. */
export async function startImport(
  deps: ImportDeps,
  caller: Caller,
  slug: string,
  input: ImportInput,
  workers = deps.config.RAG_IMPORT_WORKERS,
) {
  const { row, created, lake } = await prepareImport(deps, caller, slug, input);
  if (row.status === 'running' && workers > 0) {
    const shard: Shard = { index: 0, count: 1 };
    void runImportWorkers(workerDeps({ ...deps, lake }), caller, row, { workers, shard }).catch((err: unknown) =>
      deps.logger.warn({ event: 'retrieval.import_failed', import: row.id, err: (err as Error).message }, 'import failed'),
    );
  }
  return { view: viewImport(row), created };
}

/** `svc embed --import <id>`: another worker (a shard, a Job's pod) joins an import; a stopped one runs again. */
export async function joinImport(deps: ImportDeps, caller: Caller, slug: string, id: string): Promise<store.ImportRow> {
  const collection = await requireVisible(deps.policy, caller, slug, await collections.findCollection(deps.db, slug));
  await requireAllowed(deps.policy, caller, 'upload', collection);
  const row = await store.findImport(deps.db, slug, id);
  if (!row) throw notFound(`Collection '${slug}' has no import '${id}'.`);
  if (!deps.lake) throw conflict(`Collection '${slug}' is on the lake, and this service has no Trino (SVC_TRINO_URL).`);
  await readSource(() => refusePersonalColumns(deps.config, deps.lake!, caller, row.spec));
  if (row.status === 'failed' || row.status === 'cancelled') await store.setStatus(deps.db, id, 'running');
  return (await store.findImport(deps.db, slug, id))!;
}

export async function getImport(deps: ImportDeps, caller: Caller, slug: string, id: string): Promise<ImportView> {
  await requireVisible(deps.policy, caller, slug, await collections.findCollection(deps.db, slug));
  const row = await store.findImport(deps.db, slug, id);
  if (!row) throw notFound(`Collection '${slug}' has no import '${id}'.`);
  return viewImport(row);
}

export async function listImports(deps: ImportDeps, caller: Caller, slug: string): Promise<ImportView[]> {
  await requireVisible(deps.policy, caller, slug, await collections.findCollection(deps.db, slug));
  return (await store.listImports(deps.db, slug)).map(viewImport);
}

/** Stops the import at each worker's next file; the rows written stay. Asked again, the same import resumes. */
export async function cancelImport(deps: ImportDeps, caller: Caller, slug: string, id: string): Promise<ImportView> {
  const collection = await requireVisible(deps.policy, caller, slug, await collections.findCollection(deps.db, slug));
  await requireAllowed(deps.policy, caller, 'upload', collection);
  const row = await store.findImport(deps.db, slug, id);
  if (!row) throw notFound(`Collection '${slug}' has no import '${id}'.`);
  await store.setStatus(deps.db, id, 'cancelled');
  return viewImport((await store.findImport(deps.db, slug, id))!);
}

export function viewImport(row: store.ImportRow): ImportView {
  const seconds = (Date.now() - row.run_started_at.getTime()) / 1000;
  const sinceRun = row.rows_done - row.run_rows_start;
  const rate = row.status === 'running' && sinceRun > 0 && seconds > 0 ? sinceRun / seconds : null;
  const left = Math.max(0, row.rows_total - row.rows_done);
  return {
    import_id: row.id,
    collection: row.collection_slug,
    document_id: row.document_id,
    source: row.spec.source,
    text: row.spec.text,
    key: row.spec.key,
    metadata: row.spec.metadata,
    status: row.status,
    error: row.error,
    rows_total: row.rows_total,
    rows_done: row.rows_done,
    parts: row.split_count,
    parts_done: row.splits_done,
    rate_per_second: rate === null ? null : Math.round(rate * 10) / 10,
    eta_seconds: row.status === 'done' ? 0 : rate ? Math.ceil(left / rate) : null,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}

/** Parts of at most `partRows` rows, a power of two between 16 (so several workers share even a small source) and 1024. */
export function splitCount(total: number, partRows: number): number {
  let n = 16;
  while (n < sql.BUCKETS && n * partRows < total) n *= 2;
  return n;
}

function checkSpec(input: ImportInput): sql.ImportSpec {
  const field = (name: string, value: string) => {
    const v = value.trim();
    if (!v) throw badRequest(`'${name}' is empty: name a column or expression of the source.`);
    if (v.includes(';')) throw badRequest(`'${name}' holds ';': the source is one table or one SELECT statement.`);
    return v;
  };
  const source = field('source', input.source);
  if (!sql.isTableSource(source) && !/^(select|with)\b/i.test(source))
    throw badRequest(`'source' must be a table (catalog.schema.table) or one SELECT statement; got '${source.slice(0, 80)}'.`);
  const metadata = (input.metadata ?? []).map((m) => m.trim().toLowerCase());
  for (const m of metadata) {
    if (!COLUMN.test(m)) throw badRequest(`metadata column '${m}' is not a plain column name (letters, digits and _).`);
    if (TABLE_COLUMNS.has(m))
      throw badRequest(`metadata column '${m}' has the name of a column every collection table has; select it under another name.`);
  }
  if (new Set(metadata).size !== metadata.length) throw badRequest('metadata names a column twice.');
  return { source, text: field('text', input.text), key: field('key', input.key), metadata };
}

/** The caller's own mistakes in the source (an unknown column, a syntax error) are theirs to fix: 422, not 502. */
async function readSource<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof TrinoError && err.kind === 'invalid') throw unprocessable(`Trino cannot read the import's source: ${err.message}`);
    throw err;
  }
}
