import type { ChartSpec } from './dashboards/chart.ts';

// POST /query's request and its answer, as the pipeline takes and gives them (and the cache keeps them).
export type QueryRequest = {
  question: string;
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
