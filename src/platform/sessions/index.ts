import type { Sql } from '../db/index.ts';

// Conversation sessions any service keeps: the last turns of one user's session, read back within a time to live,
// so a follow-up question can be read with what came before. A session belongs to its user: another user's
// session id names a different, empty session.

export type SessionKey = { service: string; user: string; session: string };
export type Turn<D = Record<string, unknown>> = { question: string; detail: D; created_at: Date };

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

/** Adds a turn and lets go of the session's turns beyond the newest `keep`. */
export async function appendTurn(
  sql: Sql,
  key: SessionKey,
  turn: { question: string; detail: Record<string, unknown> },
  keep: number,
): Promise<void> {
  await sql.query(`INSERT INTO session_turns (service, user_id, session_id, question, detail) VALUES ($1, $2, $3, $4, $5::jsonb)`, [
    key.service,
    key.user,
    key.session,
    turn.question,
    JSON.stringify(turn.detail),
  ]);
  await sql.query(
    `DELETE FROM session_turns WHERE service = $1 AND user_id = $2 AND session_id = $3
       AND id NOT IN (SELECT id FROM session_turns WHERE service = $1 AND user_id = $2 AND session_id = $3 ORDER BY id DESC LIMIT $4)`,
    [key.service, key.user, key.session, keep],
  );
}
