import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../../platform/db/index.ts';
import type { Embedder } from '../../platform/gateway/index.ts';
import type { Caller } from '../../platform/identity.ts';
import type { Limiter } from '../../platform/limits/index.ts';
import type { Logger } from '../../platform/log.ts';
import { createS3Store } from '../../platform/objects/s3-store.ts';
import type { ObjectStore } from '../../platform/objects/index.ts';
import { TrinoError } from '../../platform/trino/index.ts';
import { nextSeqs, type Lake } from '../backends/lake.ts';
import { tableOf } from '../backends/lake-sql.ts';
import { collectionHead } from '../store.ts';
import { importFile, type ImportedRow } from './parquet.ts';
import * as sql from './statements.ts';
import * as store from './store.ts';

// An import's workers (docs/retrieval.md, "Imports"). Each claims a part, reads its rows from the source as the
// caller, embeds them in batches with a bounded number of requests in flight, writes them as Parquet files into the
// collection's table location and has Trino register each file (one snapshot), counting the rows only then. A worker
// killed mid-part leaves rows the table holds and a count behind them: whoever claims the part next reads which of
// its keys the table holds and skips them, so a key is one row, whatever stopped when.

export type ImportWorkerDeps = {
  db: Database;
  lake: Lake;
  embedder: Embedder;
  limiter: Limiter;
  logger: Logger;
  settings: { fileRows: number; concurrency: number; batchSize: number; claimTimeoutMs: number };
};

export type Shard = { index: number; count: number };

export type WorkerOptions = {
  workers: number;
  shard: Shard;
  /** Ends the workers at their next file (the CLI's Ctrl-C); the import stays running for others to resume. */
  signal?: AbortSignal;
};

/** What an import's workers need of it: its row, its table and the columns kept beside each row. */
type Job = {
  row: store.ImportRow;
  caller: Caller;
  fqn: string;
  metadata: sql.MetadataColumn[];
  files: { store: ObjectStore; bucket: string; path: string };
};

/** Runs `workers` workers on this shard's parts until none is left to claim and every claimed one is whole. */
export async function runImportWorkers(deps: ImportWorkerDeps, caller: Caller, row: store.ImportRow, opts: WorkerOptions): Promise<void> {
  const job = await openJob(deps, caller, row);
  await store.beginRun(deps.db, row.id, deps.settings.claimTimeoutMs);
  const prefix = randomBytes(4).toString('hex');
  const loops = Array.from({ length: opts.workers }, (_, w) => workLoop(deps, job, `${prefix}-${w}`, opts));
  const results = await Promise.allSettled(loops);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    const message = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
    await store.setStatus(deps.db, row.id, 'failed', message);
    throw failed.reason;
  }
}

async function openJob(deps: ImportWorkerDeps, caller: Caller, row: store.ImportRow): Promise<Job> {
  const collection = await collectionHead(deps.db, row.collection_slug);
  if (!collection?.chunk_store) throw new Error(`collection ${row.collection_slug} has no lake table`);
  const fqn = tableOf(deps.lake.settings.schema, collection.chunk_store);
  const { bucket, path } = await sql.tableLocation(deps.lake, fqn);
  const spec = row.spec as sql.ImportSpec & { columns?: sql.MetadataColumn[] };
  return {
    row,
    caller,
    fqn,
    metadata: spec.columns ?? [],
    files: { store: createS3Store({ ...deps.lake.settings.objects, bucket }), bucket, path },
  };
}

async function workLoop(deps: ImportWorkerDeps, job: Job, worker: string, opts: WorkerOptions): Promise<void> {
  const { claimTimeoutMs } = deps.settings;
  for (;;) {
    if (opts.signal?.aborted) return;
    const claim = await store.claimSplit(deps.db, job.row.id, worker, opts.shard, claimTimeoutMs);
    if (claim) {
      const whole = await importPart(deps, job, claim.split, claim.started, worker, opts.signal);
      if (whole) await store.finishSplit(deps.db, { id: job.row.id, documentId: job.row.document_id }, claim.split, worker);
      else await store.releaseSplit(deps.db, job.row.id, claim.split, worker);
      continue;
    }
    // nothing to claim: done when this shard's parts are all whole, else another worker holds one (or held it and
    // stopped: its claim lapses and this worker takes it)
    if (!(await store.shardLeft(deps.db, job.row.id, opts.shard))) return;
    if ((await store.importStatus(deps.db, job.row.id)) !== 'running') return;
    await sleep(Math.min(1000, claimTimeoutMs / 4), opts.signal);
  }
}

/** One part, file by file. True when it is whole; false when the import stopped or the claim was lost. */
async function importPart(
  deps: ImportWorkerDeps,
  job: Job,
  split: number,
  started: boolean,
  worker: string,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const { row } = job;
  await store.markStarted(deps.db, row.id, split, worker);
  const held = new Set<string>();
  if (started) {
    const { rows } = await deps.lake.asService(sql.keysOfPart(job.fqn, row.document_id, split, row.split_count));
    for (const [key] of rows) held.add(String(key));
  }
  const { rows } = await deps.lake.asCaller(job.caller, sql.partRows(row.spec, job.metadata, split, row.split_count));
  // a key met twice in the source is one row: the first; a key the table holds is counted as done
  const fresh: unknown[][] = [];
  const seen = new Set<string>();
  let done = 0;
  for (const r of rows) {
    const key = String(r[0]);
    if (seen.has(key)) continue;
    seen.add(key);
    if (held.has(key)) done++;
    else fresh.push(r);
  }
  const at = { id: row.id, slug: row.collection_slug, documentId: row.document_id };
  if (!(await store.recordRows(deps.db, at, split, worker, done))) return false;
  const renew = setInterval(() => void store.markStarted(deps.db, row.id, split, worker).catch(() => {}), deps.settings.claimTimeoutMs / 3);
  try {
    for (let from = 0; from < fresh.length; from += deps.settings.fileRows) {
      if (signal?.aborted) return false;
      const batch = fresh.slice(from, from + deps.settings.fileRows);
      await writeFile(deps, job, split, batch);
      done += batch.length;
      if (!(await store.recordRows(deps.db, at, split, worker, done))) return false;
    }
    return true;
  } finally {
    clearInterval(renew);
  }
}

/** Embeds the rows, writes them as one Parquet file under the table's location, and has Trino register it. */
async function writeFile(deps: ImportWorkerDeps, job: Job, split: number, batch: unknown[][]): Promise<void> {
  await deps.limiter.charge(job.caller, 'retrieval.embedding', batch.length);
  const vectors = await embedAll(
    deps,
    batch.map((r) => String(r[1])),
  );
  const seqs = await nextSeqs(deps.db, batch.length);
  const rows: ImportedRow[] = batch.map((r, i) => ({
    chunkId: chunkIdOf(job.row.document_id, String(r[0])),
    key: String(r[0]),
    text: String(r[1]),
    bucket: Number(r[2]),
    seq: seqs[i]!,
    embedding: Float32Array.from(vectors[i]!),
    metadata: r.slice(3),
  }));
  const bytes = importFile(rows, { id: job.row.document_id, filename: job.row.filename }, job.metadata, BigInt(Date.now()) * 1000n);
  // a folder of its own: add_files registers every file under the location it is given
  const folder = `${job.files.path}/data/import-${job.row.id}/p${split}-${randomBytes(6).toString('hex')}`;
  await job.files.store.put(`${folder}/part-0.parquet`, bytes);
  await registerFiles(deps.lake, job.fqn, `s3://${job.files.bucket}/${folder}`);
}

/**
 * Trino's add_files for a folder. Iceberg commits are optimistic: shards registering files at once can find the table
 * moved under them (ICEBERG_COMMIT_ERROR, nothing committed), and the one that lost tries again on the new snapshot.
 */
async function registerFiles(lake: Lake, fqn: string, location: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await lake.asService(sql.addFiles(fqn, location));
      return;
    } catch (error) {
      const conflict = error instanceof TrinoError && error.errorName === 'ICEBERG_COMMIT_ERROR' && /concurrent/i.test(error.message);
      if (!conflict || attempt >= COMMIT_ATTEMPTS) throw error;
      await sleep(50 * attempt + Math.random() * 100); // apart, so the shards do not collide again
    }
  }
}
const COMMIT_ATTEMPTS = 5;

/** The texts' vectors in order, `batchSize` texts a request and at most `concurrency` requests at once. */
async function embedAll(deps: ImportWorkerDeps, texts: string[]): Promise<number[][]> {
  const { batchSize, concurrency } = deps.settings;
  const out = new Array<number[]>(texts.length);
  let next = 0;
  const lane = async () => {
    while (next < texts.length) {
      const at = next;
      next += batchSize;
      const vectors = await deps.embedder.embed(texts.slice(at, at + batchSize));
      for (let i = 0; i < vectors.length; i++) out[at + i] = vectors[i]!;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return out;
}

/** A row's chunk id from its import's document and its key: the same key of the same import is the same chunk, in any run. */
export function chunkIdOf(documentId: string, key: string): string {
  const h = createHash('sha256').update(documentId).update('\0').update(key).digest('hex');
  // an RFC 9562 version 8 (custom) UUID, so it reads as one wherever chunk ids are checked
  const variant = ((Number.parseInt(h[16]!, 16) & 3) | 8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
