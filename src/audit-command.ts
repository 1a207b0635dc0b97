// `svc audit <verify|export|head|prune>`: the compliance reviewer's and the operator's commands over the audit chain
// (src/platform/audit does the work; docs/audit.md says how to use them).
import { loadPlatformConfig, type Env } from './platform/config.ts';
import { openDatabase } from './platform/db/index.ts';
import { openObjectStore } from './platform/objects/index.ts';
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
} from './platform/audit/index.ts';
import { UsageError } from './policies-command.ts';

export const AUDIT_USAGE = `  audit verify [--from SEQ] [--anchor SEQ:HASH ...]
                               walk the audit chain; exit 1 naming the first record changed, removed, inserted,
                               moved or rewritten (checked against the signed heads in SVC_AUDIT_STORE and a
                               retention checkpoint, with SVC_AUDIT_PUBLIC_KEY)
  audit export [--from SEQ]    the audit records as JSON lines on stdout, for a SIEM
  audit head                   the latest seq and hash (as GET /audit/head gives them)
  audit prune (--through SEQ | --before DATE)
                               remove old records, leaving a checkpoint signed with SVC_AUDIT_SIGNING_KEY
`;

export async function auditCommand(sub: string | undefined, args: string[], env: Env): Promise<number> {
  const platform = loadPlatformConfig(env);
  const db = await openDatabase(platform);
  try {
    switch (sub) {
      case 'verify': {
        const heads = loadHeadSettings(env, platform.DATA_DIR);
        const result = await verifyChain(db, {
          from: seqFlag(args, '--from'),
          anchors: anchorsOf(args),
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
          { from: seqFlag(args, '--from') },
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
        const before = flag(args, '--before');
        const date = before === undefined ? undefined : new Date(before);
        if (date && Number.isNaN(date.getTime())) throw new UsageError(`--before ${before} is not a date (e.g. 2026-01-01)`);
        const checkpoint = await pruneChain(db, {
          through: seqFlag(args, '--through'),
          before: date,
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
      default:
        throw new UsageError(`unknown audit command '${sub ?? ''}'`);
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

const flag = (args: string[], name: string): string | undefined => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  if (args[i + 1] === undefined) throw new UsageError(`${name} needs a value`);
  return args[i + 1];
};

function seqFlag(args: string[], name: string): number | undefined {
  const value = flag(args, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${name} ${value} is not a record number (1 or more)`);
  return n;
}

function anchorsOf(args: string[]): ChainHead[] {
  return args.flatMap((a, i) => {
    if (a !== '--anchor') return [];
    const m = /^(\d+):([0-9a-f]{64})$/.exec(args[i + 1] ?? '');
    if (!m) throw new UsageError(`--anchor ${args[i + 1] ?? ''} is not SEQ:HASH (as GET /audit/head gives them)`);
    return [{ seq: Number(m[1]), hash: m[2]! }];
  });
}
