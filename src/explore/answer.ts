import type { ChartSpec } from './dashboards/chart.ts';

// POST /query's request and its answer, as the pipeline takes and gives them (and the cache keeps them).
export type QueryRequest = {
  /** Exactly one of question and sql (the route refuses both or neither). */
  question?: string | undefined;
  /** A statement the caller wrote or edited: it skips catalog search and generation, and nothing else. */
  sql?: string | undefined;
  session_id?: string | undefined;
  execute: boolean;
  confirm_cost: boolean;
  force: boolean;
  persist: boolean;
  model?: string | undefined;
  /** The published page's chart; proposed from the result's columns when absent. */
  chart?: ChartSpec | undefined;
};

export type QueryResponse = {
  sql: string;
  columns: { name: string; type: string }[];
  preview_rows: unknown[][];
  row_count: number;
  dashboard_url: string | null;
  dashboard_id: string | null;
  reasoning: { intent: string; candidate_tables: string[]; allowed_tables: string[]; tables_used: string[] };
  masked_columns: string[];
  cost_bytes: number | null;
  cached: boolean;
  session_history_size: number;
  model: string;
};

/** POST /query/csv: every row of the result (redacted as the answer shows it), for a file; nothing is published. */
export type ExportedResult = { sql: string; columns: { name: string; type: string }[]; rows: unknown[][]; masked_columns: string[] };

/** The intent an edited statement shows in its reasoning, and the turn it leaves in a session's history. */
export const EDITED_INTENT = 'edited SQL';
export const EDITED_TURN = 'Run this SQL, as I edited it.';
