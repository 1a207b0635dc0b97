import type { KeyObject } from 'node:crypto';
import type { Database, Sql } from '../db/index.ts';
import { GENESIS_HASH, hashOf, type ChainedRecord } from './canonical.ts';
import { chainHead, readRecords, type ChainHead } from './chain.ts';
import { checkpointSigned, latestCheckpoint } from './checkpoint.ts';

// `svc audit verify`: walk the chain in seq order and name the first record that is not what was written. Each
// record must hash to its stored hash (else it was changed) and link to the record before it (else something was
// removed, inserted or moved). A break is told apart by looking one record back and one ahead: a genuine record
// always links to the genuine record before it, whatever an editor did around it.

export type FindingKind = 'changed' | 'removed' | 'inserted' | 'reordered' | 'checkpoint' | 'anchor';
export type Finding = { seq: number; kind: FindingKind; message: string };

export type VerifyResult = {
  ok: boolean;
  /** Records checked, and the seq range walked. */
  checked: number;
  from: number;
  through: number;
  head: ChainHead;
  finding?: Finding;
};

export type VerifyOptions = {
  /** Start at this seq, trusting the stored hash of the record before it. Default: the whole chain. */
  from?: number | undefined;
  /** Stop after this seq (`svc audit prune` checks what it is about to cut). Default: the head. */
  through?: number | undefined;
  /** To check a retention checkpoint's signature. */
  publicKey?: KeyObject | undefined;
  /** Hashes an outside system kept from GET /audit/head: the record at each seq must still have that hash. */
  anchors?: ChainHead[];
};

const PAGE = 1000;

export async function verifyChain(db: Database, opts: VerifyOptions = {}): Promise<VerifyResult> {
  return db.transaction(async (tx) => {
    // One snapshot: the head and every record as of the same instant, while writers carry on.
    await tx.query(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
    return walk(tx, opts);
  });
}

type Link = { seq: number; hash: string };

async function walk(sql: Sql, opts: VerifyOptions): Promise<VerifyResult> {
  const head = await chainHead(sql);
  const start = await startingPoint(sql, opts);
  // Without a bound the walk reads past the head too: a record there was inserted.
  const through = opts.through === undefined ? Number.MAX_SAFE_INTEGER : Math.min(opts.through, head.seq);
  const result = (checked: number, last: number, finding?: Finding): VerifyResult => ({
    ok: finding === undefined,
    checked,
    from: start.anchor.seq + 1,
    through: last,
    head,
    ...(finding ? { finding } : {}),
  });
  if ('finding' in start) return result(0, start.anchor.seq, start.finding);

  const anchors = new Map((opts.anchors ?? []).map((a) => [a.seq, a.hash]));
  let before: Link | undefined; // the record before prev, to recognise an inserted prev
  let prev: Link = start.anchor;
  let checked = 0;
  const records = pages(sql, start.anchor.seq + 1, through);
  let next = await records.next();
  while (!next.done) {
    const r = next.value;
    next = await records.next();
    const ahead = next.done ? undefined : next.value;
    const finding = judge(r, prev, before, ahead);
    if (finding) return result(checked, prev.seq, finding);
    const anchored = anchors.get(r.seq);
    if (anchored !== undefined && anchored !== r.hash) {
      return result(checked, prev.seq, {
        seq: r.seq,
        kind: 'anchor',
        message: `record ${r.seq} has hash ${r.hash}, not the anchored ${anchored}: the chain up to it was rewritten`,
      });
    }
    before = prev;
    prev = { seq: r.seq, hash: r.hash };
    checked += 1;
  }
  return result(checked, prev.seq, tail(prev, before, head, through));
}

/** Where the walk starts: the record before `from`, the latest retention checkpoint, or the genesis hash. */
async function startingPoint(sql: Sql, opts: VerifyOptions): Promise<{ anchor: Link } | { anchor: Link; finding: Finding }> {
  if (opts.from !== undefined && opts.from > 1) {
    const [before] = await readRecords(sql, opts.from - 1, 1, opts.from - 1);
    if (before) return { anchor: { seq: before.seq, hash: before.hash } };
  }
  const checkpoint = await latestCheckpoint(sql);
  // (a `from` whose record before is gone starts here too, and the walk names what is missing)
  if (!checkpoint) return { anchor: { seq: 0, hash: GENESIS_HASH } };
  const anchor = { seq: checkpoint.through_seq, hash: checkpoint.hash };
  if (!opts.publicKey) {
    return {
      anchor,
      finding: {
        seq: anchor.seq,
        kind: 'checkpoint',
        message: `records through ${anchor.seq} were cut by a retention checkpoint whose signature cannot be checked: set SVC_AUDIT_PUBLIC_KEY`,
      },
    };
  }
  if (!checkpointSigned(checkpoint, opts.publicKey)) {
    return {
      anchor,
      finding: {
        seq: anchor.seq,
        kind: 'checkpoint',
        message: `the retention checkpoint through record ${anchor.seq} is not signed by SVC_AUDIT_PUBLIC_KEY: it was forged or changed`,
      },
    };
  }
  return { anchor };
}

/** The first problem with `r`, given the last good record (prev), the one before it, and the record after r. */
function judge(r: ChainedRecord, prev: Link, before: Link | undefined, ahead: ChainedRecord | undefined): Finding | undefined {
  if (r.seq > prev.seq + 1) return removed(prev.seq + 1, r.seq - 1);
  const linked = r.prev_hash === prev.hash;
  const intact = hashOf(r) === r.hash;
  if (linked && intact) return undefined;
  const aheadFollowsPrev = ahead !== undefined && ahead.prev_hash === prev.hash;
  if (linked) {
    return aheadFollowsPrev
      ? { seq: r.seq, kind: 'inserted', message: `record ${r.seq} was inserted: the record after it follows record ${prev.seq} directly` }
      : { seq: r.seq, kind: 'changed', message: `record ${r.seq} was changed: its content no longer hashes to its stored hash` };
  }
  if (before && r.prev_hash === before.hash) {
    return {
      seq: prev.seq,
      kind: 'inserted',
      message: `record ${prev.seq} was inserted: record ${r.seq} follows record ${before.seq} directly`,
    };
  }
  if (aheadFollowsPrev) {
    return r.prev_hash === ahead.hash
      ? { seq: r.seq, kind: 'reordered', message: `records ${r.seq} and ${ahead.seq} were swapped: each links to the other's place` }
      : { seq: r.seq, kind: 'inserted', message: `record ${r.seq} was inserted: the record after it follows record ${prev.seq} directly` };
  }
  if (hashOf({ ...r, seq: r.seq + 1 }) === r.hash) {
    return { seq: r.seq, kind: 'removed', message: `the record at seq ${r.seq} was removed and the records after it renumbered` };
  }
  if (!intact)
    return {
      seq: r.seq,
      kind: 'changed',
      message: `record ${r.seq} was changed: neither its content nor its link to record ${prev.seq} holds`,
    };
  return {
    seq: r.seq,
    kind: 'removed',
    message: `record ${r.seq} does not follow record ${prev.seq}: the record it was written after is gone`,
  };
}

/** The last record walked against the head: a record past it was inserted, a missing tail removed. */
function tail(last: Link, before: Link | undefined, head: ChainHead, through: number): Finding | undefined {
  if (through < head.seq) return last.seq < through ? removed(last.seq + 1, through) : undefined; // a bounded walk
  if (last.seq < head.seq) return removed(last.seq + 1, head.seq);
  if (last.seq > head.seq) {
    return { seq: head.seq + 1, kind: 'inserted', message: `record ${head.seq + 1} was inserted after the head (seq ${head.seq})` };
  }
  if (last.hash !== head.hash) {
    return before !== undefined && head.hash === before.hash
      ? { seq: last.seq, kind: 'inserted', message: `record ${last.seq} was inserted: the head is record ${before.seq}'s hash` }
      : { seq: last.seq, kind: 'changed', message: `record ${last.seq} does not have the head's hash: it was replaced` };
  }
  return undefined;
}

const removed = (first: number, last: number): Finding => ({
  seq: first,
  kind: 'removed',
  message: first === last ? `record ${first} was removed` : `records ${first} to ${last} were removed`,
});

async function* pages(sql: Sql, from: number, through: number): AsyncGenerator<ChainedRecord> {
  let at = from;
  for (;;) {
    const page = await readRecords(sql, at, PAGE, through);
    yield* page;
    if (page.length < PAGE) return;
    at = page[page.length - 1]!.seq + 1;
  }
}
