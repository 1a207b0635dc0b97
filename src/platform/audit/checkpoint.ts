import type { KeyObject } from 'node:crypto';
import { payloadSigned, signPayload } from './signature.ts';
import type { Sql } from '../db/index.ts';
import { canonicalJson } from './canonical.ts';

// A retention checkpoint says, under the operator's signature, where the chain was cut: the last removed record's seq
// and hash. The first record kept links to that hash, so the chain stays checkable from there; removing records
// without a checkpoint, or forging one without the private key, shows up in `svc audit verify`.

export type Checkpoint = { through_seq: number; hash: string; removed: number; at: Date; key_id: string; signature: string };

/** The signed bytes: the checkpoint's fields but the signature, in the chain's canonical JSON. */
export const checkpointPayload = (c: Omit<Checkpoint, 'signature'>): string =>
  canonicalJson({
    at: c.at.toISOString(),
    hash: c.hash,
    key_id: c.key_id,
    removed: c.removed,
    through_seq: c.through_seq,
    version: 'svc-audit-checkpoint-v1',
  });

export function signCheckpoint(c: Omit<Checkpoint, 'signature'>, privateKey: KeyObject): Checkpoint {
  return { ...c, signature: signPayload(checkpointPayload(c), privateKey) };
}

export const checkpointSigned = (c: Checkpoint, publicKey: KeyObject): boolean =>
  payloadSigned(checkpointPayload(c), c.signature, publicKey);

export async function latestCheckpoint(sql: Sql): Promise<Checkpoint | undefined> {
  const [row] = await sql.query<Checkpoint>(
    `SELECT through_seq, hash, removed, at, key_id, signature FROM audit_checkpoints ORDER BY through_seq DESC LIMIT 1`,
  );
  return row;
}

export async function insertCheckpoint(sql: Sql, c: Checkpoint): Promise<void> {
  await sql.query(`INSERT INTO audit_checkpoints (through_seq, hash, removed, at, key_id, signature) VALUES ($1, $2, $3, $4, $5, $6)`, [
    c.through_seq,
    c.hash,
    c.removed,
    c.at,
    c.key_id,
    c.signature,
  ]);
}
