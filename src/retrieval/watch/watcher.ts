import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RetrievalDeps } from '../deps.ts';
import { scanErrorMessage, ScanInterrupted, scanWatch, type ScanControl, type WatchSettings } from './scan.ts';
import * as watches from './store.ts';

// Each replica polls for watches that are due and free, takes one's lease, scans it, and moves on: one scan at a
// time per replica, one replica per watch. The lease is renewed while the scan runs; a replica that dies leaves
// it to expire, and the next holder starts where the scan stopped.

export type Watcher = {
  readonly owner: string;
  /** Scans whatever is due now, one watch after another; resolves when none is left. */
  runDue(): Promise<void>;
  /** Ends the polling; a scan under way stops after its current file and hands its lease back. */
  stop(): Promise<void>;
};

export function startWatcher(
  deps: RetrievalDeps,
  settings: WatchSettings,
  opts: { pollSeconds: number; owner?: string; open?: ScanControl['open'] },
): Watcher {
  const owner = opts.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  let stopping = false;
  let running: Promise<void> | undefined;

  async function runDue(): Promise<void> {
    while (!stopping) {
      const due = await watches.dueWatches(deps.db, 10);
      let scanned = 0;
      for (const slug of due) {
        if (stopping) return;
        const watch = await watches.claimWatch(deps.db, slug, owner, settings.leaseSeconds);
        if (!watch) continue; // another replica took it first
        scanned++;
        await runScan(watch);
      }
      if (scanned === 0) return;
    }
  }

  async function runScan(watch: watches.WatchRow): Promise<void> {
    const slug = watch.collection_slug;
    const started = performance.now();
    let lost = false;
    const renewal = setInterval(
      () => {
        watches.renewLease(deps.db, slug, owner, settings.leaseSeconds).then(
          (held) => (lost ||= !held),
          (err) => deps.logger.warn({ err, collection: slug }, 'could not renew a watch lease'),
        );
      },
      (settings.leaseSeconds * 1000) / 3,
    );
    try {
      const counts = await scanWatch(deps, watch, { owner, settings, open: opts.open, shouldStop: () => stopping || lost });
      await watches.finishScan(deps.db, slug, owner, watch.uri, counts, null);
      deps.metrics.watchScans.inc({ outcome: 'ok' });
      deps.metrics.watchScanDuration.observe((performance.now() - started) / 1000);
      deps.logger.info({ event: 'retrieval.watch_scanned', collection: slug, uri: watch.uri, ...counts }, 'watched source scanned');
    } catch (err) {
      if (err instanceof ScanInterrupted) {
        deps.metrics.watchScans.inc({ outcome: 'interrupted' });
        await watches.releaseLease(deps.db, slug, owner).catch(() => {});
        return;
      }
      const reason = scanErrorMessage(err);
      deps.metrics.watchScans.inc({ outcome: 'error' });
      deps.logger.warn({ err, event: 'retrieval.watch_scan_failed', collection: slug, uri: watch.uri }, 'scan of a watched source failed');
      await watches
        .finishScan(
          deps.db,
          slug,
          owner,
          watch.uri,
          { seen: 0, ingested: 0, updated: 0, deleted: 0, failed: 0 },
          reason ?? 'internal error; the service log has the details.',
        )
        .catch(() => {});
    } finally {
      clearInterval(renewal);
    }
  }

  const tick = () => {
    running ??= runDue()
      .catch((err) => deps.logger.error({ err }, 'watch polling failed'))
      .finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(tick, opts.pollSeconds * 1000);
  timer.unref();
  void tick();

  return {
    owner,
    runDue: async () => {
      await running;
      await tick();
    },
    async stop() {
      stopping = true;
      clearInterval(timer);
      await running;
    },
  };
}
