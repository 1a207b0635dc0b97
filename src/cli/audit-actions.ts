// What `svc audit <verify|export|head|prune>` run (audit.ts holds their flags): the compliance reviewer's and the
// operator's commands over the audit chain (src/platform/audit does the work; docs/audit.md says how to use them).
import { loadPlatformConfig, type Env } from '../platform/config.ts';
import { openDatabase } from '../platform/db/index.ts';
import { openObjectStore } from '../platform/objects/index.ts';
import {
  chainHead,
  exportChain,
  loadAuditKeys,
  loadHeadSettings,
  pruneChain,
  RetentionRefused,
  verifyChain,
  type ChainHead,
  type VerifyResult,
} from '../platform/audit/index.ts';
import { UsageError } from './usage-error.ts';

/** The flags as typed: record numbers and anchors are checked here, so a mistyped one is a usage error (exit 2). */
export type AuditOptions = { from?: string; anchor?: string[]; through?: string; before?: string };
export type AuditAction = 'verify' | 'export' | 'head' | 'prune';

export async function auditCommand(sub: AuditAction, opts: AuditOptions, env: Env): Promise<number> {
  // the flags first: a mistyped one is said before the database opens
  const from = seqOf('--from', opts.from);
  const anchors = anchorsOf(opts.anchor ?? []);
  const through = seqOf('--through', opts.through);
  const before = opts.before === undefined ? undefined : new Date(opts.before);
  if (before && Number.isNaN(before.getTime())) throw new UsageError(`--before ${opts.before} is not a date (e.g. 2026-01-01)`);
  const platform = loadPlatformConfig(env);
  const db = await openDatabase(platform);
  try {
    switch (sub) {
      case 'verify': {
        const heads = loadHeadSettings(env, platform.DATA_DIR);
        const result = await verifyChain(db, {
          from,
          anchors,
          publicKey: loadAuditKeys(env, platform.DATA_DIR).publicKey,
          heads: { store: openObjectStore(heads.store, env), every: heads.every },
        });
        if (result.ok) {
          console.log(
            `audit chain verified: ${result.checked} records, seq ${result.from} to ${result.through}; head ${result.head.seq} ${result.head.hash}`,
          );
          console.log(signedReach(result));
          return 0;
        }
        const f = result.finding!;
        console.log(`audit chain broken at record ${f.seq} (${f.kind}): ${f.message}`);
        return 1;
      }
      case 'export': {
        const written = await exportChain(
          db,
          (line) => new Promise<void>((done) => (process.stdout.write(line) ? done() : process.stdout.once('drain', done))),
          { from },
        );
        console.error(`exported ${written} audit records`);
        return 0;
      }
      case 'head': {
        const head = await chainHead(db);
        console.log(JSON.stringify(head));
        return 0;
      }
      case 'prune': {
        const keys = loadAuditKeys(env, platform.DATA_DIR);
        if (!keys.privateKey || !keys.publicKey)
          throw new UsageError('audit prune needs SVC_AUDIT_SIGNING_KEY (the PEM private key that signs the checkpoint, or its file)');
        const checkpoint = await pruneChain(db, {
          through,
          before,
          privateKey: keys.privateKey,
          publicKey: keys.publicKey,
          keyId: keys.keyId,
        });
        console.log(
          checkpoint
            ? `removed ${checkpoint.removed} records through seq ${checkpoint.through_seq}; checkpoint ${checkpoint.hash} signed by key ${checkpoint.key_id}`
            : 'nothing to remove',
        );
        return 0;
      }
    }
  } catch (err) {
    if (err instanceof RetentionRefused) {
      console.error(`svc: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await db.close();
  }
}

/** How far the signed heads reach: what after them only the hash links hold. */
function signedReach(result: VerifyResult): string {
  const { heads, through } = result.signed ?? { heads: 0, through: 0 };
  const unsigned = result.head.seq === through + 1 ? `record ${through + 1} is` : `records ${through + 1} to ${result.head.seq} are`;
  const after = result.head.seq > through ? `; ${unsigned} only hash-linked until the next head` : '';
  return heads === 0
    ? `no signed head covers the chain yet${after}`
    : `signed heads: ${heads} checked, the newest at seq ${through}${after}`;
}

function seqOf(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${name} ${value} is not a record number (1 or more)`);
  return n;
}

function anchorsOf(values: string[]): ChainHead[] {
  return values.map((value) => {
    const m = /^(\d+):([0-9a-f]{64})$/.exec(value);
    if (!m) throw new UsageError(`--anchor ${value} is not SEQ:HASH (as GET /audit/head gives them)`);
    return { seq: Number(m[1]), hash: m[2]! };
  });
}
