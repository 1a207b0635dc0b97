import { createHash } from 'node:crypto';

// The chain's canonical encoding, written down once: a record's hash is
//   sha256_hex("svc-audit-v1\n" + seq + "\n" + prev_hash + "\n" + canonical({action, actor, at, detail, service}))
// where canonical() is JSON with object keys sorted by UTF-16 code units, no spaces, strings and numbers as
// JSON.stringify writes them, and `at` the ISO 8601 UTC time with milliseconds. An outside verifier needs nothing else.

export const GENESIS_HASH = '0'.repeat(64);
export const CHAIN_VERSION = 'svc-audit-v1';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The part of a record its writer chooses; seq, prev_hash and hash come from the chain. */
export type AuditEntry = {
  service: string;
  action: string;
  actor: string;
  at: Date;
  detail: { [key: string]: Json };
};

export type ChainedRecord = AuditEntry & { seq: number; prev_hash: string; hash: string };

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`an audit record cannot hold ${value}`);
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`an audit record cannot hold ${typeof value}`);
    return text;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** The text the hash covers after the header lines: everything of the record but its place in the chain. */
export const recordBody = (e: AuditEntry): string =>
  canonicalJson({ action: e.action, actor: e.actor, at: e.at.toISOString(), detail: e.detail, service: e.service });

export const hashInput = (seq: number, prevHash: string, body: string): string => `${CHAIN_VERSION}\n${seq}\n${prevHash}\n${body}`;

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export const hashOf = (r: Pick<ChainedRecord, 'seq' | 'prev_hash'> & AuditEntry): string =>
  sha256Hex(hashInput(r.seq, r.prev_hash, recordBody(r)));

/**
 * The detail as the database will give it back: jsonb refuses NUL and lone surrogates, so text is made well formed
 * (U+FFFD for either), NaN and infinities become null and undefined fields are dropped, before it is hashed:
 * what is hashed is what is stored.
 */
const NOT_STORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function storable(value: unknown): Json {
  if (typeof value === 'string') return value.replace(NOT_STORABLE, '\uFFFD');
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null; // as JSON.stringify writes them
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : storable(v)));
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[storable(k) as string] = storable(v);
    return out;
  }
  throw new TypeError(`an audit record cannot hold ${typeof value}`);
}
