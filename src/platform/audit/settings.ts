import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig, optionalStr, str, type Env } from '../config.ts';

// The keys of the retention checkpoints: the private one only where `svc audit prune` runs, the public one wherever
// `svc audit verify` runs. Each is a PEM text or the path of a file holding it (Ed25519 recommended).
export const auditShape = {
  AUDIT_SIGNING_KEY: optionalStr(),
  AUDIT_PUBLIC_KEY: optionalStr(),
  AUDIT_KEY_ID: str('audit'),
};

export type AuditKeys = { privateKey?: KeyObject; publicKey?: KeyObject; keyId: string };

export function loadAuditKeys(env: Env): AuditKeys {
  const raw = loadConfig(auditShape, env);
  const privateKey = raw.AUDIT_SIGNING_KEY ? key('SVC_AUDIT_SIGNING_KEY', raw.AUDIT_SIGNING_KEY, createPrivateKey) : undefined;
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
