import { createPublicKey, type KeyObject } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import type { Env } from '../config.ts';
import type { Database } from '../db/index.ts';
import type { Logger } from '../log.ts';
import { openObjectStore, type ObjectStore } from '../objects/index.ts';
import { hashOf } from './canonical.ts';
import { chainHead, readRecords } from './chain.ts';
import { latestCheckpoint } from './checkpoint.ts';
import { headSigned, listHeads, readHead, signHead, writeHead } from './heads.ts';
import { headSigningKeys, loadHeadSettings } from './settings.ts';

// Signs the chain's head into the object store off the request path: it looks at the committed head every
// `pollMs`, and signs the record at every multiple of `every` it has not signed yet, or the head itself when
// `minutes` have passed since the last signature and records came. A stretch is re-checked before it is signed (a
// signature must never bless a record edited before the signer saw it). A failure is logged and counted, and the
// same stretch is tried again at the next look; a request never waits for any of it.

export type HeadSigner = {
  /** One look at the head, signing what is due; what the timer runs. Never throws. */
  tick(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
  /** Adds the signer's counter to a service's metrics registry. */
  expose(registry: Registry): void;
};

export type HeadSignerOptions = {
  db: Database;
  store: ObjectStore;
  privateKey: KeyObject;
  keyId: string;
  every: number;
  minutes: number;
  logger: Logger;
  pollMs?: number;
  /** Heads signed in one look at most, so catching up on a long unsigned chain comes in slices. */
  maxPerTick?: number;
  now?: () => number;
};

export function createHeadSigner(o: HeadSignerOptions): HeadSigner {
  const now = o.now ?? Date.now;
  const publicKey = createPublicKey(o.privateKey);
  const heads = new Counter({
    name: 'svc_audit_heads_total',
    help: 'Signed audit heads by outcome: written to the object store, failed (retried at the next trigger), refused (the stretch does not verify)',
    labelNames: ['outcome'] as const,
    registers: [],
  });
  let last: { seq: number; hash?: string; at: number } | undefined;
  let refusedAt: number | undefined; // the record last refused: told once, not at every look
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  // Where signing resumes: the newest head in the store this key signed, else the start of the chain.
  async function resume(): Promise<{ seq: number; hash?: string; at: number }> {
    const listed = await listHeads(o.store);
    for (let i = listed.length - 1; i >= 0; i--) {
      const found = await readHead(o.store, listed[i]!);
      if (found.head && headSigned(found.head, publicKey)) return { seq: found.head.seq, hash: found.head.hash, at: now() };
    }
    return { seq: 0, at: now() };
  }

  async function signThrough(
    from: { seq: number; hash?: string },
    target: number,
  ): Promise<{ seq: number; hash: string } | 'refused' | 'refused again'> {
    const records = await readRecords(o.db, from.seq + 1, target - from.seq, target);
    const first = records[0];
    if (!first) return 'refused';
    // The stretch links to the last signed record, or (records cut by retention) to the checkpoint's record.
    let prev = from.hash;
    if (first.seq !== from.seq + 1 || prev === undefined) {
      const checkpoint = await latestCheckpoint(o.db);
      prev = first.seq === 1 ? '0'.repeat(64) : checkpoint?.through_seq === first.seq - 1 ? checkpoint.hash : undefined;
    }
    let expected = first.seq;
    for (const r of records) {
      if (r.seq !== expected || r.prev_hash !== prev || hashOf(r) !== r.hash) {
        if (refusedAt === r.seq) return 'refused again';
        refusedAt = r.seq;
        o.logger.error(
          { seq: r.seq, expected },
          `audit record ${r.seq} does not verify: no head is signed over it (run svc audit verify to see what changed)`,
        );
        return 'refused';
      }
      prev = r.hash;
      expected += 1;
    }
    if (expected - 1 !== target) return 'refused';
    const head = signHead(
      {
        seq: target,
        hash: prev!,
        from_seq: first.seq,
        hashes: records.map((r) => r.hash),
        at: new Date(now()).toISOString(),
        key_id: o.keyId,
      },
      o.privateKey,
    );
    await writeHead(o.store, head);
    return { seq: target, hash: head.hash };
  }

  async function look(): Promise<void> {
    last ??= await resume();
    const { seq: headSeq } = await chainHead(o.db);
    const due: number[] = [];
    for (let s = (Math.floor(last.seq / o.every) + 1) * o.every; s <= headSeq && due.length < (o.maxPerTick ?? 100); s += o.every)
      due.push(s);
    if (due.length === 0 && headSeq > last.seq && now() - last.at >= o.minutes * 60_000) due.push(headSeq);
    for (const target of due) {
      const signed = await signThrough(last, target);
      if (signed === 'refused' || signed === 'refused again') {
        if (signed === 'refused') heads.inc({ outcome: 'refused' });
        return;
      }
      last = { ...signed, at: now() };
      heads.inc({ outcome: 'written' });
    }
  }

  const tick = (): Promise<void> => {
    running ??= look()
      .catch((err: unknown) => {
        heads.inc({ outcome: 'failed' });
        o.logger.warn({ err: String(err), store: o.store.describe() }, 'an audit head could not be signed: retried at the next look');
      })
      .finally(() => (running = undefined));
    return running;
  };

  return {
    tick,
    start() {
      timer ??= setInterval(() => void tick(), o.pollMs ?? 1000);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
    expose(registry) {
      if (!registry.getSingleMetric('svc_audit_heads_total')) registry.registerMetric(heads);
    },
  };
}

/**
 * The signer of a process that serves: its key (headSigningKeys), its store and its N/M rule from the settings.
 * None when only a public key is configured: this process cannot sign, and says so once.
 */
export async function openHeadSigner(env: Env, deps: { db: Database; dataDir: string; logger: Logger }): Promise<HeadSigner | undefined> {
  const keys = await headSigningKeys(env, deps.dataDir, deps.logger);
  if (!keys.privateKey) {
    deps.logger.error(
      'SVC_AUDIT_PUBLIC_KEY is set without SVC_AUDIT_SIGNING_KEY: this process signs no audit head, and svc audit verify fails once the unsigned records are too many',
    );
    return undefined;
  }
  const settings = loadHeadSettings(env, deps.dataDir);
  return createHeadSigner({
    db: deps.db,
    store: openObjectStore(settings.store, env),
    privateKey: keys.privateKey,
    keyId: keys.keyId,
    every: settings.every,
    minutes: settings.minutes,
    logger: deps.logger,
  });
}
