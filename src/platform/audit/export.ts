import type { Database } from '../db/index.ts';
import type { ChainedRecord } from './canonical.ts';
import { readRecords } from './chain.ts';

/** One record as a JSON line for a SIEM: every field the hash covers, and the hashes, so it can verify on its own. */
export const recordLine = (r: ChainedRecord): string =>
  JSON.stringify({
    seq: r.seq,
    at: r.at.toISOString(),
    service: r.service,
    action: r.action,
    actor: r.actor,
    detail: r.detail,
    prev_hash: r.prev_hash,
    hash: r.hash,
  });

/** `svc audit export`: the records from `from` on, in seq order, a page at a time; returns how many were written. */
export async function exportChain(
  db: Database,
  write: (line: string) => Promise<void> | void,
  opts: { from?: number | undefined } = {},
): Promise<number> {
  let at = opts.from ?? 1;
  let written = 0;
  for (;;) {
    const page = await readRecords(db, at, 1000);
    for (const r of page) await write(`${recordLine(r)}\n`);
    written += page.length;
    if (page.length < 1000) return written;
    at = page[page.length - 1]!.seq + 1;
  }
}
