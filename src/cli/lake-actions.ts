// What `svc lake maintain` runs (lake.ts holds its flags): the retrieval service's own settings, database and lake
// (SVC_PG_*, SVC_TRINO_*, SVC_RAG_LAKE_SCHEMA), and src/retrieval/lake-maintain.ts does the work.
import { ConfigError, loadPlatformConfig, type Env } from '../platform/config.ts';
import { openDatabase } from '../platform/db/index.ts';
import { createLogger } from '../platform/log.ts';
import { loadRetrievalConfig } from '../retrieval/config.ts';
import { isTrinoDataSize, isTrinoDuration, LakeMaintainError, maintainLake, type CollectionReport } from '../retrieval/lake-maintain.ts';
import { openLake } from '../retrieval/service.ts';
import { UsageError } from './usage-error.ts';

export type MaintainFlags = { collection?: string; retain: string; fileSizeThreshold: string; timeout?: string; json: boolean };

/** A nightly job's statements run far longer than a question's: an hour each unless the lake's own limit is longer. */
const MAINTENANCE_TIMEOUT_MS = 3_600_000;

export async function maintain(flags: MaintainFlags, env: Env): Promise<number> {
  // the flags first: a mistyped one is said before anything opens
  if (!isTrinoDuration(flags.retain)) throw new UsageError(`--retain ${flags.retain} is not a duration (e.g. 7d, 12h, 30m)`);
  if (!isTrinoDataSize(flags.fileSizeThreshold))
    throw new UsageError(`--file-size-threshold ${flags.fileSizeThreshold} is not a data size (e.g. 100MB, 512kB)`);
  const timeoutMs = flags.timeout === undefined ? undefined : durationMs(flags.timeout);
  if (timeoutMs === 0) throw new UsageError(`--timeout ${flags.timeout} must be longer than 0`);
  const config = loadRetrievalConfig(env);
  if (!config.TRINO_URL)
    throw new ConfigError('svc lake maintain needs SVC_TRINO_URL (and SVC_TRINO_SERVICE_TOKEN): the Trino of the lake collections');
  const lake = await openLake(
    { ...config, RAG_LAKE_TIMEOUT_MS: timeoutMs ?? Math.max(config.RAG_LAKE_TIMEOUT_MS, MAINTENANCE_TIMEOUT_MS) },
    { embedded: false, logger: createLogger('svc', 'warn') },
  );
  const db = await openDatabase(loadPlatformConfig(env));
  try {
    const reports = await maintainLake(
      { db, lake: lake! },
      { collection: flags.collection, retain: flags.retain, fileSizeThreshold: flags.fileSizeThreshold },
      // each collection as it ends: a long nightly run shows its progress in the job's log
      (r) => {
        if (!flags.json) console.log(line(r));
      },
    );
    if (flags.json)
      console.log(JSON.stringify({ retain: flags.retain, file_size_threshold: flags.fileSizeThreshold, collections: reports }, null, 2));
    else if (reports.length === 0) console.log('no lake collections');
    return reports.every((r) => r.ok) ? 0 : 1;
  } catch (err) {
    if (err instanceof LakeMaintainError) {
      // a retention the catalog refuses is the command line's fault; a collection that is not there, the request's
      if (err.kind === 'retention-refused') throw new UsageError(err.message);
      console.error(`svc: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await db.close();
  }
}

function line(r: CollectionReport): string {
  if (!r.ok) return `${r.collection} (${r.table}): failed after ${r.seconds} s: ${r.error}`;
  return `${r.collection} (${r.table}): files ${r.files.before} -> ${r.files.after}, snapshots ${r.snapshots.before} -> ${r.snapshots.after}, ${r.seconds} s`;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function durationMs(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text);
  if (!m) throw new UsageError(`--timeout ${text} is not a duration (e.g. 1h, 90m)`);
  return Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
}
