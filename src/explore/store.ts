import type { Sql } from '../platform/db/index.ts';
import type { ChartSpec } from './dashboards/chart.ts';

// Every SQL statement of the explore service.
export type DashboardRow = {
  id: string;
  owner: string;
  visibility: 'private' | 'users' | 'groups' | 'public';
  allowed_users: string[];
  allowed_groups: string[];
  title: string;
  question: string;
  sql: string;
  columns: { name: string; type: string }[];
  /** The chart drawn in the page; null for a dashboard of cards, or one published before charts were chosen. */
  chart: ChartSpec | null;
  /** A dashboard of cards: the ids of the dashboards it holds; null for one question's dashboard. */
  cards: string[] | null;
  /** The page in the object store and its sha256; null for a page written before pages moved there. */
  object_key: string | null;
  digest: string | null;
  /** The page file of a dashboard published before pages moved to the object store. */
  file: string | null;
  /** 'drawing' from publish until its page is stored (object_key and digest null), then 'ready'; or 'failed'. */
  page_state: 'drawing' | 'ready' | 'failed';
  /** Why the page could not be drawn, when page_state is 'failed'. */
  page_error: string | null;
  created_at: Date;
};

type NewDashboard = Omit<
  DashboardRow,
  'created_at' | 'visibility' | 'allowed_users' | 'allowed_groups' | 'file' | 'page_state' | 'page_error'
>;

export async function insertDashboard(sql: Sql, d: NewDashboard): Promise<void> {
  const { text, params } = dashboardInsert(d);
  await sql.query(text, params);
}

/** The insert of a new dashboard row, for a caller that sends it with other writes (an answer's audit record). */
export function dashboardInsert(d: NewDashboard): { text: string; params: unknown[] } {
  return {
    text: `INSERT INTO explore_dashboards (id, owner, title, question, sql, columns, object_key, digest, chart, cards, page_state)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9::jsonb, $10::jsonb, $11)`,
    params: [
      d.id,
      d.owner,
      d.title,
      d.question,
      d.sql,
      JSON.stringify(d.columns),
      d.object_key,
      d.digest,
      json(d.chart),
      json(d.cards),
      d.object_key ? 'ready' : 'drawing',
    ],
  };
}

/**
 * The page drawn after publish, if the row still waits for it with the same chart: false when the row moved on (its
 * chart changed meanwhile, or it is gone), and the page drawn is then not the row's.
 */
export async function pageDrawn(sql: Sql, id: string, page: { object_key: string; digest: string; chart: ChartSpec }): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE explore_dashboards SET object_key = $2, digest = $3, page_state = 'ready', page_error = NULL
     WHERE id = $1 AND page_state = 'drawing' AND chart = $4::jsonb RETURNING id`,
    [id, page.object_key, page.digest, JSON.stringify(page.chart)],
  );
  return rows.length > 0;
}

/** Rows still waiting for their page since before `seconds` ago: their drawing's process stopped before it ended. */
export async function staleDrawings(sql: Sql, seconds: number): Promise<Pick<DashboardRow, 'id' | 'owner' | 'chart'>[]> {
  return sql.query(
    `SELECT id, owner, chart FROM explore_dashboards
     WHERE page_state = 'drawing' AND deleted_at IS NULL AND created_at < now() - make_interval(secs => $1)`,
    [seconds],
  );
}

/** Why the page of a row still waiting for it could not be drawn. */
export async function pageFailed(sql: Sql, id: string, error: string): Promise<void> {
  await sql.query(`UPDATE explore_dashboards SET page_state = 'failed', page_error = $2 WHERE id = $1 AND page_state = 'drawing'`, [
    id,
    error,
  ]);
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

/** A re-rendered page and the chart it now draws. */
export async function updateChart(sql: Sql, id: string, page: { object_key: string; digest: string; chart: ChartSpec }): Promise<void> {
  await sql.query(
    `UPDATE explore_dashboards SET object_key = $2, digest = $3, chart = $4::jsonb, page_state = 'ready', page_error = NULL WHERE id = $1`,
    [id, page.object_key, page.digest, JSON.stringify(page.chart)],
  );
}

export async function updatePage(sql: Sql, id: string, page: { object_key: string; digest: string }): Promise<void> {
  await sql.query(`UPDATE explore_dashboards SET object_key = $2, digest = $3, file = NULL WHERE id = $1`, [
    id,
    page.object_key,
    page.digest,
  ]);
}

export type Turn = { question: string; sql: string; summary: string; created_at: Date };

export async function recentTurns(sql: Sql, user: string, session: string, ttlSeconds: number, limit: number): Promise<Turn[]> {
  const rows = await sql.query<Turn>(
    `SELECT question, sql, summary, created_at FROM explore_turns
     WHERE user_id = $1 AND session_id = $2 AND created_at > now() - make_interval(secs => $3)
     ORDER BY id DESC LIMIT $4`,
    [user, session, ttlSeconds, limit],
  );
  return rows.reverse();
}

/** Adds a turn and counts the session's turns, in one round trip (the count is read before the insert, so it adds one). */
export async function appendTurn(
  sql: Sql,
  t: { user: string; session: string; question: string; sql: string; summary: string },
): Promise<number> {
  const rows = await sql.query<{ n: number }>(
    `WITH added AS (INSERT INTO explore_turns (user_id, session_id, question, sql, summary) VALUES ($1, $2, $3, $4, $5) RETURNING 1)
     SELECT ((SELECT count(*) FROM explore_turns WHERE user_id = $1 AND session_id = $2) + (SELECT count(*) FROM added))::int AS n`,
    [t.user, t.session, t.question, t.sql, t.summary],
  );
  return rows[0]!.n;
}

export async function insertFeedback(
  sql: Sql,
  f: { dashboard: string; user: string; rating: 'up' | 'down'; comment: string },
): Promise<void> {
  await sql.query(`INSERT INTO explore_feedback (dashboard_id, user_id, rating, comment) VALUES ($1, $2, $3, $4)`, [
    f.dashboard,
    f.user,
    f.rating,
    f.comment,
  ]);
}

const DASHBOARD_COLUMNS = `id, owner, visibility, allowed_users, allowed_groups, title, question, sql, columns, chart, cards, object_key, digest, file, page_state, page_error, created_at`;

export async function listDashboards(sql: Sql): Promise<DashboardRow[]> {
  return sql.query<DashboardRow>(
    `SELECT ${DASHBOARD_COLUMNS} FROM explore_dashboards WHERE deleted_at IS NULL ORDER BY created_at DESC, id`,
  );
}

export async function findDashboard(sql: Sql, id: string): Promise<DashboardRow | undefined> {
  const rows = await sql.query<DashboardRow>(`SELECT ${DASHBOARD_COLUMNS} FROM explore_dashboards WHERE id = $1 AND deleted_at IS NULL`, [
    id,
  ]);
  return rows[0];
}

export async function updateSharing(
  sql: Sql,
  id: string,
  share: { visibility: DashboardRow['visibility']; allowed_users: string[]; allowed_groups: string[] },
): Promise<void> {
  await sql.query(`UPDATE explore_dashboards SET visibility = $2, allowed_users = $3::jsonb, allowed_groups = $4::jsonb WHERE id = $1`, [
    id,
    share.visibility,
    JSON.stringify(share.allowed_users),
    JSON.stringify(share.allowed_groups),
  ]);
}

/** The row goes at once; its page is removed by the periodic cleanup. */
export async function markDashboardDeleted(sql: Sql, id: string): Promise<void> {
  await sql.query(`UPDATE explore_dashboards SET deleted_at = now() WHERE id = $1`, [id]);
}

export async function listDeletedDashboards(sql: Sql): Promise<Pick<DashboardRow, 'id' | 'object_key' | 'file'>[]> {
  return sql.query(`SELECT id, object_key, file FROM explore_dashboards WHERE deleted_at IS NOT NULL`);
}

export async function purgeDashboard(sql: Sql, id: string): Promise<void> {
  await sql.query(`DELETE FROM explore_dashboards WHERE id = $1`, [id]);
}

export type Chart = { type: 'bar' | 'line' | 'scatter' | 'table'; x?: string | undefined; y?: string | undefined };
export type SavedRow = {
  id: string;
  owner: string;
  title: string;
  question: string | null;
  sql: string;
  chart: Chart | null;
  created_at: Date;
};

export async function insertSaved(sql: Sql, s: Omit<SavedRow, 'created_at'>): Promise<SavedRow> {
  const [row] = await sql.query<SavedRow>(
    `INSERT INTO explore_saved (id, owner, title, question, sql, chart) VALUES ($1, $2, $3, $4, $5, $6::jsonb)
     RETURNING id, owner, title, question, sql, chart, created_at`,
    [s.id, s.owner, s.title, s.question, s.sql, s.chart === null ? null : JSON.stringify(s.chart)],
  );
  return row!;
}

export async function listSaved(sql: Sql, owner: string, limit: number): Promise<SavedRow[]> {
  return sql.query<SavedRow>(
    `SELECT id, owner, title, question, sql, chart, created_at FROM explore_saved WHERE owner = $1 ORDER BY created_at DESC, id LIMIT $2`,
    [owner, limit],
  );
}

export async function countSaved(sql: Sql, owner: string): Promise<number> {
  const [row] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM explore_saved WHERE owner = $1`, [owner]);
  return row!.n;
}

/** Deletes the owner's saved question; false when the owner has none of that id (another owner's included). */
export async function deleteSaved(sql: Sql, owner: string, id: string): Promise<boolean> {
  const rows = await sql.query<{ id: string }>(`DELETE FROM explore_saved WHERE id = $1 AND owner = $2 RETURNING id`, [id, owner]);
  return rows.length > 0;
}
