// The explore API as the console reads it, from the service's own types where it has them, so a change of shape
// there is a type error in console.js (`npm run typecheck`). Types only: never served.
import type { DashboardView } from '../dashboards/sharing.ts';
import type { HistoryItem } from '../history.ts';
import type { ModelList } from '../models.ts';
import type { QueryResponse } from '../answer.ts';
import type { SavedView } from '../saved.ts';
import type { CatalogEntry } from '../catalog.ts';

export type { DashboardView, ModelList, QueryResponse };
/** GET /me (written in routes/misc.ts). */
export type Me = { user: string; roles: string[]; groups: string[]; console: boolean };
/** What a refused query adds to its problem+json: the statement and the estimate, when it got that far. */
export type QueryProblem = { sql?: string; cost_bytes?: number | null };
/** GET /history (routes/workbench.ts). */
export type HistoryPage = { history: HistoryItem[]; next_before: number | null };
/** GET /saved (routes/workbench.ts). */
export type SavedList = { saved: SavedView[] };
/** GET /catalog (routes/misc.ts). */
export type Catalog = { entries: CatalogEntry[]; fallback: boolean };
