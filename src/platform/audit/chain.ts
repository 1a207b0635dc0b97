import type { Sql } from '../db/index.ts';
import { CHAIN_VERSION, recordBody, storable, type AuditEntry, type ChainedRecord, type Json } from './canonical.ts';

export type AuditInput = {
  /** The service that writes the record (`retrieval`, `explore`, `policy`). */
  service: string;
  /** What happened, in the service's words (`query`, `question`, `dashboard_share`). */
  action: string;
  /** Who did it: the caller's user, or the replica for what a process does on its own. */
  actor: string;
  detail: Record<string, unknown>;
  at?: Date;
};

export type Appended = { seq: number; hash: string };

/**
 * A write that goes with a record, in the record's own statement (a data-modifying WITH): both are stored or
 * neither, in one round trip. Its text numbers its own parameters from $1; it holds no other `$`.
 */
export type AuditedWrite = { text: string; params: readonly unknown[] };

/**
 * Appends one record to the chain, in one statement: lock the head row, hash the record with the head's hash, insert
 * it, move the head. Run it inside the transaction that makes the change it records (last, so the head's lock is held
 * only until the commit), or alone. Writers on every replica queue on the head row, so seq has no gaps and no ties.
 */
export async function appendAudit(sql: Sql, input: AuditInput, writes: readonly AuditedWrite[] = []): Promise<Appended> {
  const entry: AuditEntry = {
    service: input.service,
    action: input.action,
    actor: storable(input.actor) as string,
    at: new Date(Math.floor((input.at ?? new Date()).getTime())),
    detail: storable(input.detail) as { [key: string]: Json },
  };
  const params: unknown[] = [recordBody(entry), entry.at, entry.service, entry.action, entry.actor, JSON.stringify(entry.detail)];
  let text = APPEND;
  if (writes.length > 0) {
    const ctes = writes.map((w, i) => {
      const offset = params.length;
      params.push(...w.params);
      return `w${i} AS (${w.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)}),\n`;
    });
    text = APPEND.replace('WITH prev AS', () => `WITH ${ctes.join('')}prev AS`);
  }
  const [row] = await sql.query<Appended>(text, params);
  if (!row) throw new Error('the audit head row is missing: the audit migration has not been applied');
  return row;
}

// sha256 in SQL over the same text hashInput() builds, so the lock is held for one statement's work only.
const APPEND = `
WITH prev AS (SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE),
next AS (
  SELECT seq + 1 AS seq, hash AS prev_hash,
         encode(sha256(convert_to('${CHAIN_VERSION}' || E'\\n' || (seq + 1)::text || E'\\n' || hash || E'\\n' || $1::text, 'UTF8')), 'hex') AS hash
  FROM prev),
rec AS (
  INSERT INTO audit_records (seq, at, service, action, actor, detail, prev_hash, hash)
  SELECT seq, $2, $3, $4, $5, $6::jsonb, prev_hash, hash FROM next
  RETURNING seq, hash)
UPDATE audit_head h SET seq = rec.seq, hash = rec.hash FROM rec WHERE h.id = 1 RETURNING h.seq, h.hash`;

export type ChainHead = { seq: number; hash: string };

export async function chainHead(sql: Sql): Promise<ChainHead> {
  const [head] = await sql.query<ChainHead>(`SELECT seq, hash FROM audit_head WHERE id = 1`);
  if (!head) throw new Error('the audit head row is missing: the audit migration has not been applied');
  return head;
}

/** Records in seq order from `from` (inclusive), at most `limit`: for verify and export, a page at a time. */
export async function readRecords(sql: Sql, from: number, limit: number, through = Number.MAX_SAFE_INTEGER): Promise<ChainedRecord[]> {
  return sql.query<ChainedRecord>(
    `SELECT seq, at, service, action, actor, detail, prev_hash, hash FROM audit_records WHERE seq >= $1 AND seq <= $3 ORDER BY seq LIMIT $2`,
    [from, limit, through],
  );
}

/** Newest first, of one service's action, optionally of one actor and older than `before` (a page's last seq). */
export async function listRecords(
  sql: Sql,
  opts: { service: string; action: string; actor?: string | undefined; limit: number; before?: number | undefined },
): Promise<ChainedRecord[]> {
  // two statements, not one with `$4 IS NULL OR`: each has its index (service, action[, actor], seq DESC)
  const before = opts.before ?? Number.MAX_SAFE_INTEGER;
  return opts.actor === undefined
    ? sql.query<ChainedRecord>(
        `SELECT seq, at, service, action, actor, detail, prev_hash, hash FROM audit_records WHERE service = $1 AND action = $2 AND seq < $4 ORDER BY seq DESC LIMIT $3`,
        [opts.service, opts.action, opts.limit, before],
      )
    : sql.query<ChainedRecord>(
        `SELECT seq, at, service, action, actor, detail, prev_hash, hash FROM audit_records WHERE service = $1 AND action = $2 AND actor = $5 AND seq < $4 ORDER BY seq DESC LIMIT $3`,
        [opts.service, opts.action, opts.limit, before, opts.actor],
      );
}

/** Records of one service's action whose detail names one of `ids` under `key` (feedback on given records), in seq order. */
export async function listRecordsAbout(
  sql: Sql,
  opts: { service: string; action: string; key: string; ids: number[] },
): Promise<ChainedRecord[]> {
  if (opts.ids.length === 0) return [];
  return sql.query<ChainedRecord>(
    `SELECT seq, at, service, action, actor, detail, prev_hash, hash FROM audit_records
     WHERE service = $1 AND action = $2 AND (detail ->> $3)::bigint = ANY(ARRAY(SELECT jsonb_array_elements_text($4::jsonb))::bigint[])
     ORDER BY seq`,
    [opts.service, opts.action, opts.key, JSON.stringify(opts.ids)],
  );
}
