import type { KeyObject } from 'node:crypto';
import { payloadSigned, signPayload } from './signature.ts';
import { ObjectStoreError, readObject, type ObjectStore } from '../objects/index.ts';
import { canonicalJson } from './canonical.ts';

// A signed head says, under a key the service holds and the database does not, which hash each record of a stretch
// had when it was signed: `hashes` lists the hashes of records `from_seq` to `seq`, the last being the head's `hash`.
// Anyone who rewrites a record and re-hashes the chain after it (the encoding is public) changes the hash at every
// later seq, so the first record a signed head lists with another hash is the first one rewritten. The heads live in
// the object store, outside the database, as `audit/heads/<seq, 16 digits>.json`.

export const HEADS_PREFIX = 'audit/heads/';
export const HEAD_VERSION = 'svc-audit-head-v1';

export type SignedHead = {
  seq: number;
  hash: string;
  from_seq: number;
  hashes: string[];
  at: string;
  key_id: string;
  signature: string;
};

/** Zero-padded, so the store lists the heads in seq order. */
export const headKey = (seq: number): string => `${HEADS_PREFIX}${String(seq).padStart(16, '0')}.json`;
const seqOfKey = (key: string): number | undefined => {
  const m = /^audit\/heads\/(\d{1,16})\.json$/.exec(key);
  return m ? Number(m[1]) : undefined;
};

/** The signed bytes: every field but the signature, in the chain's canonical JSON. */
export const headPayload = (h: Omit<SignedHead, 'signature'>): string =>
  canonicalJson({
    at: h.at,
    from_seq: h.from_seq,
    hash: h.hash,
    hashes: h.hashes,
    key_id: h.key_id,
    seq: h.seq,
    version: HEAD_VERSION,
  });

export function signHead(h: Omit<SignedHead, 'signature'>, privateKey: KeyObject): SignedHead {
  return { ...h, signature: signPayload(headPayload(h), privateKey) };
}

export const headSigned = (h: SignedHead, publicKey: KeyObject): boolean => payloadSigned(headPayload(h), h.signature, publicKey);

export async function writeHead(store: ObjectStore, h: SignedHead): Promise<void> {
  const bytes = Buffer.from(`${JSON.stringify(h)}\n`);
  await store.put(headKey(h.seq), bytes, { contentType: 'application/json', contentLength: bytes.length });
}

/** A head as found in the store: the parsed head, or why the object there is not one. */
export type StoredHead = { key: string; seq: number; head?: SignedHead; problem?: string };

/** The head objects in the store, in seq order, from `from` on (by the seq their key names). */
export async function listHeads(store: ObjectStore, from = 0): Promise<{ key: string; seq: number }[]> {
  const listed = await store.list(HEADS_PREFIX);
  return listed
    .filter((e) => !e.isDir)
    .map((e) => ({ key: e.key, seq: seqOfKey(e.key) }))
    .filter((e): e is { key: string; seq: number } => e.seq !== undefined && e.seq >= from)
    .sort((a, b) => a.seq - b.seq);
}

export async function readHead(store: ObjectStore, entry: { key: string; seq: number }): Promise<StoredHead> {
  // A head lists at most a few thousand hashes; anything far larger is not one.
  const bytes = await readObject(store, entry.key, 16 * 1024 * 1024).catch((err: unknown) => {
    if (err instanceof ObjectStoreError && err.code === 'TOO_LARGE') return err;
    throw err;
  });
  if (bytes instanceof ObjectStoreError) return { ...entry, problem: bytes.message };
  if (!bytes) return { ...entry, problem: 'it disappeared while being read' };
  const text = bytes.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ...entry, problem: 'it is not JSON' };
  }
  const problem = shapeProblem(parsed, entry.seq);
  return problem ? { ...entry, problem } : { ...entry, head: parsed as SignedHead };
}

function shapeProblem(v: unknown, seq: number): string | undefined {
  const h = v as Partial<SignedHead> | null;
  const hex = (s: unknown) => typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);
  if (!h || typeof h !== 'object') return 'it is not an object';
  if (h.seq !== seq) return `it names seq ${String(h.seq)}, not the ${seq} of its name`;
  if (!Number.isSafeInteger(h.from_seq) || h.from_seq! < 1 || h.from_seq! > seq) return 'its from_seq is not a record before it';
  if (!Array.isArray(h.hashes) || h.hashes.length !== seq - h.from_seq! + 1 || !h.hashes.every(hex))
    return 'its hashes do not list one hash per record from from_seq to seq';
  if (h.hash !== h.hashes[h.hashes.length - 1]) return 'its hash is not the last of its hashes';
  if (typeof h.at !== 'string' || typeof h.key_id !== 'string' || typeof h.signature !== 'string')
    return 'it lacks at, key_id or signature';
  return undefined;
}
