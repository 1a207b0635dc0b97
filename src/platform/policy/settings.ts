import { readFileSync } from 'node:fs';

import { ConfigError, flag, int, loadConfig, optionalStr, url, type Env } from '../config.ts';
import type { S3Settings } from './bundle-source.ts';
import { publicKeyFrom } from './signing.ts';
import type { KeyObject } from 'node:crypto';

// The policy port's settings, each from SVC_<NAME> or <NAME> (docs/policies.md describes them). Parsed once when
// the engine is built; a URL without a key to verify it stops start-up: an unsigned policy is never taken.
export const policyShape = {
  /** Where the signed bundle is published: https://, http://, s3://bucket/key or file://. Unset: the committed build. */
  POLICY_BUNDLE_URL: optionalStr(),
  POLICY_POLL_SECONDS: int(30, 1),
  /** The PEM public key that must have signed the bundle, or the path of a file holding it. */
  POLICY_BUNDLE_PUBLIC_KEY: optionalStr(),
  /** When set, the key id the bundle's signature must name. */
  POLICY_BUNDLE_KEY_ID: optionalStr(),
  /** The S3 endpoint for an s3:// bundle URL (MinIO); credentials from OBJSTORE_* or AWS_*. */
  POLICY_BUNDLE_S3_ENDPOINT_URL: optionalStr(),
  OBJSTORE_ACCESS_KEY_ID: optionalStr(),
  OBJSTORE_SECRET_ACCESS_KEY: optionalStr(),
  AWS_ACCESS_KEY_ID: optionalStr(),
  AWS_SECRET_ACCESS_KEY: optionalStr(),
  AWS_DEFAULT_REGION: optionalStr(),
  /** A collector for OPA's decision-log API: batches are POSTed here (e.g. http://collector:8080/logs). */
  DECISION_LOG_URL: url(),
  /** Events waiting for the collector; beyond this they are dropped and counted. */
  DECISION_LOG_BUFFER: int(10_000, 1),
  DECISION_LOG_FLUSH_SECONDS: int(5, 1),
  /** Every decision as a JSON log line too. */
  DECISION_LOG_CONSOLE: flag(true),
};

export type PolicySettings = {
  bundle?: { url: string; publicKey: KeyObject; keyId: string | undefined; pollSeconds: number; s3: S3Settings };
  decisionLog: { url: string | undefined; bufferSize: number; flushMs: number; console: boolean };
};

export function loadPolicySettings(env: Env): PolicySettings {
  const raw = loadConfig(policyShape, env);
  const decisionLog = {
    url: raw.DECISION_LOG_URL,
    bufferSize: raw.DECISION_LOG_BUFFER,
    flushMs: raw.DECISION_LOG_FLUSH_SECONDS * 1000,
    console: raw.DECISION_LOG_CONSOLE,
  };
  if (!raw.POLICY_BUNDLE_URL) return { decisionLog };
  if (!raw.POLICY_BUNDLE_PUBLIC_KEY) {
    throw new ConfigError(
      'invalid configuration: SVC_POLICY_BUNDLE_URL needs SVC_POLICY_BUNDLE_PUBLIC_KEY (the PEM public key the bundle is signed for, or its file)',
    );
  }
  const [accessKeyId, secretAccessKey] = raw.OBJSTORE_ACCESS_KEY_ID
    ? [raw.OBJSTORE_ACCESS_KEY_ID, raw.OBJSTORE_SECRET_ACCESS_KEY]
    : [raw.AWS_ACCESS_KEY_ID, raw.AWS_SECRET_ACCESS_KEY];
  const s3: S3Settings = {
    ...(raw.POLICY_BUNDLE_S3_ENDPOINT_URL ? { endpoint: raw.POLICY_BUNDLE_S3_ENDPOINT_URL } : {}),
    ...(raw.AWS_DEFAULT_REGION ? { region: raw.AWS_DEFAULT_REGION } : {}),
    ...(accessKeyId ? { accessKeyId } : {}),
    ...(secretAccessKey ? { secretAccessKey } : {}),
  };
  return {
    bundle: {
      url: raw.POLICY_BUNDLE_URL,
      publicKey: readPublicKey(raw.POLICY_BUNDLE_PUBLIC_KEY),
      keyId: raw.POLICY_BUNDLE_KEY_ID,
      pollSeconds: raw.POLICY_POLL_SECONDS,
      s3,
    },
    decisionLog,
  };
}

function readPublicKey(value: string): KeyObject {
  let pem = value;
  if (!value.includes('-----BEGIN')) {
    try {
      pem = readFileSync(value, 'utf8');
    } catch (err) {
      throw new ConfigError(
        `invalid configuration: SVC_POLICY_BUNDLE_PUBLIC_KEY is neither a PEM key nor a readable file: ${(err as Error).message}`,
      );
    }
  }
  try {
    return publicKeyFrom(pem);
  } catch (err) {
    throw new ConfigError(`invalid configuration: SVC_POLICY_BUNDLE_PUBLIC_KEY holds no usable public key: ${(err as Error).message}`);
  }
}
