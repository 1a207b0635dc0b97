import { sqlState, type Sql } from '../../platform/db/index.ts';
import { page } from '../search/paging.ts';
import { SEARCH_STATEMENT } from '../search/sql.ts';
import { runsJsonText } from './load.ts';
import { runSearch, searchRuns, type RunSearch, type SearchRunsRequest } from './search.ts';

// runs/search's answer: the page's runs as their stored JSON texts, read with the page's statement (search.ts).

/** A page of runs/search: its runs' JSON texts, in order (see RunTexts), and the next page's token. */
export type RunsPage = { runs: RunTexts; nextPageToken?: string };

/**
 * The JSON of a page's runs as texts to join with commas into the members of its array: each one run's object, or
 * several runs' objects already joined (a page built from the runs' rows). No text is empty; no run, no text.
 */
export type RunTexts = string[];

/**
 * runs/search's page: the ids and each run's stored JSON in one statement (one round trip, and no list of ids sent
 * back); when the first order key is a metric, first from its runs with a value alone (presentFirst). The stored JSON
 * of the whole statement is read by a subquery on each row of the ordered page, so the page keeps its order. A run
 * without stored JSON yet (before the upgrade's backfill reached it) sends the page through runsJsonText, which
 * builds it; so does a schema without the column (a read-only server on an older database: 42703 undefined_column).
 */
export async function searchRunsJson(db: Sql, req: SearchRunsRequest): Promise<RunsPage> {
  const search = runSearch(req);
  if (!search) return { runs: [] };
  const first = search.presentFirst;
  if (first) {
    const rows = await db.query<JsonRow>(first.sql, first.params, SEARCH_STATEMENT).catch(undefinedColumn);
    if (!rows) return builtPage(db, req);
    // A full window (the page and one row more) is the whole search's: the runs with a value come first.
    if (rows.length > search.maxResults || first.whole) return storedPage(db, rows, search);
  }
  const withJson = `SELECT p.run_id, (SELECT r.run_json FROM tracker_runs r WHERE r.run_id = p.run_id) AS run_json FROM (${search.sql}) p`;
  const rows = await db.query<JsonRow>(withJson, search.params, SEARCH_STATEMENT).catch(undefinedColumn);
  if (!rows) return builtPage(db, req);
  return storedPage(db, rows, search);
}

/** A page's row: a run and its stored JSON (null until built). */
type JsonRow = { run_id: string; run_json: string | null };

// 42703 undefined_column: a schema without run_json (a read-only server on an older database).
const undefinedColumn = (err: unknown): undefined => {
  if (sqlState(err) === '42703') return undefined;
  throw err;
};

/** The texts of the runs `runIds`, built from their rows. */
async function builtTexts(db: Sql, runIds: string[]): Promise<RunTexts> {
  const array = await runsJsonText(db, runIds);
  return array === '[]' ? [] : [array.slice(1, -1)];
}

/** The page with every run built from its rows. */
async function builtPage(db: Sql, req: SearchRunsRequest): Promise<RunsPage> {
  const found = await searchRuns(db, req);
  return { runs: await builtTexts(db, found.runIds), ...(found.nextPageToken ? { nextPageToken: found.nextPageToken } : {}) };
}

/** The page from its rows' stored JSON; built from the runs' rows if one has none yet. */
async function storedPage(db: Sql, rows: JsonRow[], search: RunSearch): Promise<RunsPage> {
  const result = page(rows, search.offset, search.maxResults);
  const texts = result.rows.map((r) => r.run_json);
  const runs = texts.every((t) => t !== null)
    ? texts
    : await builtTexts(
        db,
        result.rows.map((r) => r.run_id),
      );
  return { runs, ...(result.nextPageToken ? { nextPageToken: result.nextPageToken } : {}) };
}
