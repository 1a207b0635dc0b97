import type { KeyObject } from 'node:crypto';
import type { Database, Sql } from '../db/index.ts';
import type { ObjectStore } from '../objects/index.ts';
import { GENESIS_HASH, hashOf, type ChainedRecord } from './canonical.ts';
import { chainHead, readRecords, type ChainHead } from './chain.ts';
import { checkpointSigned, latestCheckpoint } from './checkpoint.ts';
import { headSigned, listHeads, readHead, type SignedHead } from './heads.ts';

// `svc audit verify`: walk the chain in seq order and name the first record that is not what was written. Each
// record must hash to its stored hash (else it was changed) and link to the record before it (else something was
// removed, inserted or moved). A break is told apart by looking one record back and one ahead: a genuine record
// always links to the genuine record before it, whatever an editor did around it.
//
// A chain re-hashed after an edit links and hashes well: the signed heads in the object store catch it. Each record
// a head covers must still have the hash the head lists for it, so the first rewritten record is named; a head
// signed beyond the chain's end shows records cut off; and more than 2 x SVC_AUDIT_HEAD_EVERY records after the
// newest signed head (the signer leaves at most one period and what arrived since its last look) means heads were
// deleted or are not being written.

export type FindingKind = 'changed' | 'removed' | 'inserted' | 'reordered' | 'checkpoint' | 'anchor' | 'rewritten' | 'head' | 'unsigned';
export type Finding = { seq: number; kind: FindingKind; message: string };

export type VerifyResult = {
  ok: boolean;
  /** Records checked, and the seq range walked. */
  checked: number;
  from: number;
  through: number;
  head: ChainHead;
  /** With `heads`: the signed heads checked, and the highest seq they cover (0: none). */
  signed?: { heads: number; through: number };
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
  /** Check the chain against the signed heads in this store (with `publicKey`), N being SVC_AUDIT_HEAD_EVERY. */
  heads?: { store: ObjectStore; every: number };
};

const PAGE = 1000;

export async function verifyChain(db: Database, opts: VerifyOptions = {}): Promise<VerifyResult> {
  // The heads are listed before the snapshot is taken: a head is signed only over committed records, so every head
  // listed covers records the snapshot holds, and one beyond its end means records were cut off.
  const signed = opts.heads ? await signedHeads(opts.heads.store, opts.publicKey) : undefined;
  return db.transaction(async (tx) => {
    // One snapshot: the head and every record as of the same instant, while writers carry on.
    await tx.query(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
    const result = await walk(tx, opts, signed);
    if (!signed || !result.ok) return result;
    const finding = (await signed.beyond(result.head.seq)) ?? signed.unsigned(result.head.seq, result.from - 1, opts.heads!.every);
    return { ...result, ...(finding ? { ok: false, finding } : {}) };
  });
}

/**
 * The signed heads of a store, read in seq order as the walk reaches them: `covering(seq)` is the hash the first
 * head at or after `seq` lists for it, or a finding when that head is not a genuine one.
 */
type Signed = {
  covering(seq: number): Promise<{ hash: string; head: SignedHead } | { finding: Finding } | undefined>;
  summary(): { heads: number; through: number };
  beyond(headSeq: number): Promise<Finding | undefined>;
  unsigned(headSeq: number, trustedThrough: number, every: number): Finding | undefined;
};

async function signedHeads(store: ObjectStore, publicKey: KeyObject | undefined): Promise<Signed> {
  const listed = await listHeads(store);
  let at = 0;
  let current: SignedHead | undefined;
  let checked = 0;
  const where = (seq: number) => `${store.describe()} audit/heads/${String(seq).padStart(16, '0')}.json`;
  return {
    async covering(seq) {
      while (current === undefined || current.seq < seq) {
        const entry = listed[at];
        if (!entry) return undefined;
        at += 1;
        if (entry.seq < seq) continue; // heads of records retention removed, or before --from
        const found = await readHead(store, entry);
        const fail = (message: string) => ({ finding: { seq: entry.seq, kind: 'head' as const, message } });
        if (!publicKey) return fail(`the signed head ${where(entry.seq)} cannot be checked: set SVC_AUDIT_PUBLIC_KEY`);
        if (!found.head) return fail(`the object ${where(entry.seq)} is not a signed head: ${found.problem}`);
        if (!headSigned(found.head, publicKey))
          return fail(`the signed head ${where(entry.seq)} is not signed by SVC_AUDIT_PUBLIC_KEY: it was forged or changed`);
        current = found.head;
        checked += 1;
      }
      if (seq < current.from_seq) return undefined;
      return { hash: current.hashes[seq - current.from_seq]!, head: current };
    },
    summary: () => ({ heads: checked, through: current?.seq ?? 0 }),
    async beyond(headSeq) {
      const last = listed[listed.length - 1];
      if (!last || last.seq <= headSeq) return undefined;
      const found = await readHead(store, last);
      if (!found.head || !publicKey || !headSigned(found.head, publicKey)) {
        return { seq: last.seq, kind: 'head', message: `the object ${where(last.seq)} is not a head signed by SVC_AUDIT_PUBLIC_KEY` };
      }
      return {
        seq: headSeq + 1,
        kind: 'removed',
        message: `records ${headSeq + 1} to ${last.seq} were signed (${where(last.seq)}) but the chain ends at ${headSeq}: they were removed`,
      };
    },
    unsigned(headSeq, trustedThrough, every) {
      const reach = Math.max(current?.seq ?? 0, trustedThrough);
      if (headSeq - reach <= 2 * every) return undefined;
      return {
        seq: reach + 1,
        kind: 'unsigned',
        message:
          `records ${reach + 1} to ${headSeq} are covered by no signed head in ${store.describe()}, more than the ${2 * every} ` +
          `(2 x SVC_AUDIT_HEAD_EVERY) the services leave unsigned: heads were deleted, or the services cannot write them (svc_audit_heads_total)`,
      };
    },
  };
}

type Link = { seq: number; hash: string };

async function walk(sql: Sql, opts: VerifyOptions, signed?: Signed): Promise<VerifyResult> {
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
    ...(signed ? { signed: signed.summary() } : {}),
    ...(finding ? { finding } : {}),
  });
  if ('finding' in start) return result(0, start.anchor.seq, start.finding);

  const anchors = new Map((opts.anchors ?? []).map((a) => [a.seq, a.hash]));
  let before: Link | undefined; // the record before prev, to recognise an inserted prev
  let prev: Link = start.anchor;
  let checked = 0;
  const records = pages(sql, start.anchor.seq + 1, through);
  let next = await records.next();
  // A record a signed head contradicts is named once the record after it has been judged: an inserted or removed
  // record also contradicts the heads, and the walk tells those apart one record later.
  let contradicted: Finding | undefined;
  while (!next.done) {
    const r = next.value;
    if (contradicted && r.seq > contradicted.seq + 1) return result(checked, prev.seq, contradicted);
    next = await records.next();
    const ahead = next.done ? undefined : next.value;
    const finding = judge(r, prev, before, ahead);
    if (finding) return result(checked, prev.seq, finding);
    const anchored = anchors.get(r.seq);
    if (anchored !== undefined && anchored !== r.hash) {
      return result(
        checked,
        prev.seq,
        contradicted ?? {
          seq: r.seq,
          kind: 'anchor',
          message: `record ${r.seq} has hash ${r.hash}, not the anchored ${anchored}: the chain up to it was rewritten`,
        },
      );
    }
    const covered = contradicted ? undefined : await signed?.covering(r.seq);
    if (covered && 'finding' in covered) return result(checked, prev.seq, covered.finding);
    if (covered && covered.hash !== r.hash) {
      contradicted = {
        seq: r.seq,
        kind: 'rewritten',
        message:
          `record ${r.seq} was rewritten and the chain re-hashed after it: its hash is ${r.hash}, ` +
          `the signed head of seq ${covered.head.seq} (signed ${covered.head.at}) lists ${covered.hash}`,
      };
    }
    before = prev;
    prev = { seq: r.seq, hash: r.hash };
    checked += 1;
  }
  return result(checked, prev.seq, tail(prev, before, head, through) ?? contradicted);
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
