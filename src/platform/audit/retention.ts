import type { KeyObject } from 'node:crypto';
import type { Database } from '../db/index.ts';
import { readRecords } from './chain.ts';
import { insertCheckpoint, latestCheckpoint, signCheckpoint, type Checkpoint } from './checkpoint.ts';
import { verifyChain } from './verify.ts';

export class RetentionRefused extends Error {
  override name = 'RetentionRefused';
}

/**
 * `svc audit prune`: removes the records through `through` (or all older than `before`) and leaves a signed
 * checkpoint of the last one removed, in one transaction. It first verifies what it is about to cut and refuses
 * when that is broken: a signature must never bless a tampered stretch.
 */
export async function pruneChain(
  db: Database,
  opts: { through?: number | undefined; before?: Date | undefined; privateKey: KeyObject; publicKey: KeyObject; keyId: string },
): Promise<Checkpoint | undefined> {
  const through = opts.through ?? (opts.before ? await lastBefore(db, opts.before) : undefined);
  if (through === undefined) throw new RetentionRefused('say what to remove: --through SEQ or --before DATE');
  if (through < 1) return undefined;
  const checked = await verifyChain(db, { through, publicKey: opts.publicKey });
  if (!checked.ok) throw new RetentionRefused(`the records to remove do not verify, nothing was removed: ${checked.finding!.message}`);
  return db.transaction(async (tx) => {
    const previous = await latestCheckpoint(tx);
    if (previous && previous.through_seq >= through) return undefined; // already cut
    const [last] = await readRecords(tx, through, 1, through);
    if (!last) throw new RetentionRefused(`record ${through} does not exist: the chain's head is ${checked.head.seq}`);
    const [removed] = await tx.query<{ n: number }>(
      `WITH d AS (DELETE FROM audit_records WHERE seq <= $1 RETURNING 1) SELECT count(*)::int AS n FROM d`,
      [through],
    );
    const checkpoint = signCheckpoint(
      { through_seq: through, hash: last.hash, removed: removed!.n, at: new Date(), key_id: opts.keyId },
      opts.privateKey,
    );
    await insertCheckpoint(tx, checkpoint);
    return checkpoint;
  });
}

async function lastBefore(db: Database, before: Date): Promise<number> {
  const [row] = await db.query<{ seq: number | null }>(`SELECT max(seq) AS seq FROM audit_records WHERE at < $1`, [before]);
  return row?.seq ?? 0;
}
