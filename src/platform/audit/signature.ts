import { sign, verify, type KeyObject } from 'node:crypto';

// The audit chain's signatures (retention checkpoints and signed heads) over their canonical JSON payloads.

// Ed25519 and Ed448 sign the message itself; RSA and EC keys sign its SHA-256.
const digestFor = (key: KeyObject) => (key.asymmetricKeyType === 'ed25519' || key.asymmetricKeyType === 'ed448' ? null : 'sha256');

/** The base64 signature of `payload`. */
export const signPayload = (payload: string, privateKey: KeyObject): string =>
  sign(digestFor(privateKey), Buffer.from(payload), privateKey).toString('base64');

/** Whether `signature` (base64) signs `payload` under `publicKey`; false for anything malformed. */
export function payloadSigned(payload: string, signature: string, publicKey: KeyObject): boolean {
  try {
    return verify(digestFor(publicKey), Buffer.from(payload), publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
