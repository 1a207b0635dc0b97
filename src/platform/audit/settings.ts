import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, int, loadConfig, optionalStr, str, type Env } from '../config.ts';
import type { Logger } from '../log.ts';

// The audit keys sign the retention checkpoints and the chain's heads: the private one where services run (they
// sign heads) and where `svc audit prune` runs, the public one wherever `svc audit verify` runs. Each is a PEM text
// or the path of a file holding it (Ed25519 recommended). Without either, a key is generated once into the data
// folder (a development key, as the dashboard HMAC key is): it is outside the database, not outside the machine.
export const auditShape = {
  AUDIT_SIGNING_KEY: optionalStr(),
  AUDIT_PUBLIC_KEY: optionalStr(),
  AUDIT_KEY_ID: str('audit'),
  /** A signed head every this many records... */
  AUDIT_HEAD_EVERY: int(100, 1),
  /** ...or every this many minutes when fewer came. */
  AUDIT_HEAD_MINUTES: int(5, 1),
  /** The object store of the signed heads (a folder or s3://bucket/prefix); default `objects` in the data folder. */
  AUDIT_STORE: optionalStr(),
};

export type AuditKeys = { privateKey?: KeyObject; publicKey?: KeyObject; keyId: string };
export type HeadSettings = { every: number; minutes: number; store: string };

export const DEV_KEY_FILE = 'audit-signing.pem';

export function loadHeadSettings(env: Env, dataDir: string): HeadSettings {
  const raw = loadConfig(auditShape, env);
  return { every: raw.AUDIT_HEAD_EVERY, minutes: raw.AUDIT_HEAD_MINUTES, store: raw.AUDIT_STORE ?? join(dataDir, 'objects') };
}

/**
 * The configured keys; with neither key configured and a `dataDir`, the development key generated there, if any
 * (`svc audit verify` and `prune` on the machine of a `svc dev`).
 */
export function loadAuditKeys(env: Env, dataDir?: string): AuditKeys {
  const raw = loadConfig(auditShape, env);
  const devFile = dataDir === undefined ? undefined : join(dataDir, DEV_KEY_FILE);
  const signing = raw.AUDIT_SIGNING_KEY ?? (!raw.AUDIT_PUBLIC_KEY && devFile !== undefined && existsSync(devFile) ? devFile : undefined);
  const privateKey = signing ? key('SVC_AUDIT_SIGNING_KEY', signing, createPrivateKey) : undefined;
  // The public key follows from the private one when only that is set.
  const publicKey = raw.AUDIT_PUBLIC_KEY
    ? key('SVC_AUDIT_PUBLIC_KEY', raw.AUDIT_PUBLIC_KEY, createPublicKey)
    : privateKey && createPublicKey(privateKey);
  return { keyId: raw.AUDIT_KEY_ID, ...(privateKey ? { privateKey } : {}), ...(publicKey ? { publicKey } : {}) };
}

function key(name: string, value: string, make: (pem: string) => KeyObject): KeyObject {
  let pem = value;
  if (!value.includes('-----BEGIN')) {
    try {
      pem = readFileSync(value, 'utf8');
    } catch (err) {
      throw new ConfigError(`invalid configuration: ${name} is neither a PEM key nor a readable file: ${(err as Error).message}`);
    }
  }
  try {
    return make(pem);
  } catch (err) {
    throw new ConfigError(`invalid configuration: ${name} is not a usable PEM key: ${(err as Error).message}`);
  }
}

/**
 * The key a service signs heads with: SVC_AUDIT_SIGNING_KEY; none when only a public key is configured (heads
 * are then signed elsewhere, or not at all, and verify says so); else the development key in the data folder,
 * generated on first use.
 */
export async function headSigningKeys(env: Env, dataDir: string, logger: Logger): Promise<AuditKeys> {
  const raw = loadConfig(auditShape, env);
  if (raw.AUDIT_SIGNING_KEY || raw.AUDIT_PUBLIC_KEY) return loadAuditKeys(env);
  const file = join(dataDir, DEV_KEY_FILE);
  if (!existsSync(file)) {
    await mkdir(dataDir, { recursive: true });
    const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    // 'wx': of two processes starting on one data folder, the first key written is the one both use
    await writeFile(file, pem, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    logger.warn({ file }, 'SVC_AUDIT_SIGNING_KEY is not set: audit heads are signed with a generated development key');
  }
  return loadAuditKeys(env, dataDir);
}
