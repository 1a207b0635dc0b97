import type { Caller } from '../../platform/identity.ts';
import { requireVisible } from '../access.ts';
import type { RetrievalDeps } from '../deps.ts';
import * as store from '../store.ts';
import * as watches from './store.ts';

/** A collection that watches nothing has a status too: every field about the source null, nothing counted. */
export type WatchStatus = {
  uri: string | null;
  interval_seconds: number | null;
  set_by: string | null;
  set_at: string | null;
  last_scan_at: string | null;
  next_scan_at: string | null;
  /** A replica holds the lease and is scanning now. */
  scanning: boolean;
  /** Why the last scan could not read the source, or null. */
  error: string | null;
  /** What the last finished scan did: files seen, new ones ingested, changed ones updated, gone ones deleted, failing. */
  counts: watches.ScanCounts;
  /** Every file of the source that is not indexed now, with why and when it is tried again. */
  failures: { path: string; status: 'failed' | 'skipped'; reason: string; attempts: number; retry_at: string | null }[];
};

/** For whoever may see the collection (404 for anyone else); a collection that watches nothing answers UNWATCHED. */
const UNWATCHED: WatchStatus = {
  uri: null,
  interval_seconds: null,
  set_by: null,
  set_at: null,
  last_scan_at: null,
  next_scan_at: null,
  scanning: false,
  error: null,
  counts: { seen: 0, ingested: 0, updated: 0, deleted: 0, failed: 0 },
  failures: [],
};

export async function getWatchStatus(deps: RetrievalDeps, caller: Caller, slug: string): Promise<WatchStatus> {
  await requireVisible(deps.policy, caller, slug, await store.findCollection(deps.db, slug));
  const w = await watches.findWatch(deps.db, slug);
  if (!w) return UNWATCHED;
  const files = await watches.listFiles(deps.db, slug);
  return {
    uri: w.uri,
    interval_seconds: w.interval_seconds,
    set_by: w.set_by,
    set_at: w.set_at.toISOString(),
    last_scan_at: w.last_scan_at?.toISOString() ?? null,
    next_scan_at: w.next_scan_at.toISOString(),
    scanning: w.lease_until !== null && w.lease_until.getTime() > Date.now(),
    error: w.last_error,
    counts: { seen: w.seen, ingested: w.ingested, updated: w.updated, deleted: w.deleted, failed: w.failed },
    failures: files
      .filter((f) => f.uri === w.uri && f.status !== 'indexed')
      .map((f) => ({
        path: f.path,
        status: f.status as 'failed' | 'skipped',
        reason: f.reason ?? '',
        attempts: f.attempts,
        retry_at: f.retry_at?.toISOString() ?? null,
      })),
  };
}
