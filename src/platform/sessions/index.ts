import type { Sql } from '../db/index.ts';

// Conversation sessions any service keeps: one user's turns of a session, the newest read back within a time to
// live so a follow-up question can be read with what came before, and the whole kept history listed, renamed and
// deleted by its user. A session belongs to its user: another user's session id names a different, empty session.

export type SessionKey = { service: string; user: string; session: string };
export type Turn<D = Record<string, unknown>> = { question: string; detail: D; created_at: Date };
export type SessionSummary = {
  id: string;
  /** The user's name for it, else its first question. */
  title: string;
  /** What the service says the session is about (retrieval: the collection of its last answer). */
  scope: string;
  turns: number;
  created_at: Date;
  updated_at: Date;
};

/** The newest `limit` turns younger than `ttlSeconds`, oldest first. */
export async function recentTurns<D = Record<string, unknown>>(
  sql: Sql,
  key: SessionKey,
  ttlSeconds: number,
  limit: number,
): Promise<Turn<D>[]> {
  const rows = await sql.query<Turn<D>>(
    `SELECT question, detail, created_at FROM session_turns
     WHERE service = $1 AND user_id = $2 AND session_id = $3 AND created_at > now() - make_interval(secs => $4)
     ORDER BY id DESC LIMIT $5`,
    [key.service, key.user, key.session, ttlSeconds, limit],
  );
  return rows.reverse();
}

/**
 * Adds a turn, records the session (created with this question, else moved to the top with `scope`) and lets go
 * of its turns beyond the newest `keep`. Run it in a transaction: the three writes go together.
 */
export async function appendTurn(
  sql: Sql,
  key: SessionKey,
  turn: { question: string; detail: Record<string, unknown> },
  keep: number,
  scope = '',
): Promise<void> {
  const k = [key.service, key.user, key.session];
  await sql.query(`INSERT INTO session_turns (service, user_id, session_id, question, detail) VALUES ($1, $2, $3, $4, $5::jsonb)`, [
    ...k,
    turn.question,
    JSON.stringify(turn.detail),
  ]);
  await sql.query(
    `INSERT INTO sessions (service, user_id, session_id, first_question, scope) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (service, user_id, session_id) DO UPDATE SET scope = excluded.scope, updated_at = now()`,
    [...k, turn.question, scope],
  );
  await sql.query(
    `DELETE FROM session_turns WHERE service = $1 AND user_id = $2 AND session_id = $3
       AND id NOT IN (SELECT id FROM session_turns WHERE service = $1 AND user_id = $2 AND session_id = $3 ORDER BY id DESC LIMIT $4)`,
    [...k, keep],
  );
}

const SUMMARY = `s.session_id AS id, coalesce(s.title, s.first_question) AS title, s.scope, s.created_at, s.updated_at,
  (SELECT count(*) FROM session_turns t WHERE t.service = s.service AND t.user_id = s.user_id AND t.session_id = s.session_id)::int AS turns`;

/** The user's sessions of a service, most recently used first, at most `limit`. */
export function listSessions(sql: Sql, owner: { service: string; user: string }, limit: number): Promise<SessionSummary[]> {
  return sql.query<SessionSummary>(
    `SELECT ${SUMMARY} FROM sessions s WHERE s.service = $1 AND s.user_id = $2 ORDER BY s.updated_at DESC, s.session_id LIMIT $3`,
    [owner.service, owner.user, limit],
  );
}

export async function findSession(sql: Sql, key: SessionKey): Promise<SessionSummary | undefined> {
  const rows = await sql.query<SessionSummary>(
    `SELECT ${SUMMARY} FROM sessions s WHERE s.service = $1 AND s.user_id = $2 AND s.session_id = $3`,
    [key.service, key.user, key.session],
  );
  return rows[0];
}

/** Every turn the session keeps, oldest first, whatever its age. */
export function sessionTurns<D = Record<string, unknown>>(sql: Sql, key: SessionKey): Promise<Turn<D>[]> {
  return sql.query<Turn<D>>(
    `SELECT question, detail, created_at FROM session_turns WHERE service = $1 AND user_id = $2 AND session_id = $3 ORDER BY id`,
    [key.service, key.user, key.session],
  );
}

/** False when the user has no such session. */
export async function renameSession(sql: Sql, key: SessionKey, title: string): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE sessions SET title = $4 WHERE service = $1 AND user_id = $2 AND session_id = $3 RETURNING session_id`,
    [key.service, key.user, key.session, title],
  );
  return rows.length === 1;
}

/** The session and its turns; false when the user has no such session. Run it in a transaction. */
export async function deleteSession(sql: Sql, key: SessionKey): Promise<boolean> {
  const k = [key.service, key.user, key.session];
  await sql.query(`DELETE FROM session_turns WHERE service = $1 AND user_id = $2 AND session_id = $3`, k);
  const rows = await sql.query(`DELETE FROM sessions WHERE service = $1 AND user_id = $2 AND session_id = $3 RETURNING session_id`, k);
  return rows.length === 1;
}
