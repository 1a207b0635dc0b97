// The query-engine port of the explore service. The embedded engine (PGlite with a TPC-H-shaped sample) and Trino
// implement it; the pipeline never knows which one runs its statement.
export { rowBytes } from './row-bytes.mjs';

export type EngineCaller = { user: string; token?: string | undefined };
export type EngineColumn = { name: string; type: string };
export type EngineResult = { columns: EngineColumn[]; rows: unknown[][] };
export type CatalogColumn = { catalog: string; schema: string; table: string; column: string; type: string };

export class EngineError extends Error {
  constructor(
    readonly kind:
      | 'unauthenticated'
      | 'forbidden'
      | 'invalid'
      | 'too_large'
      | 'timeout'
      | 'unavailable'
      // the embedded engine's queue (engines/fairness.ts): the caller's own calls are at their cap (429), or no
      // worker was free within SVC_ENGINE_QUEUE_TIMEOUT_MS (503); both carry a Retry-After
      | 'busy'
      | 'queue_timeout',
    message: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

export type ExecuteOptions = {
  timeoutMs: number;
  maxBytes?: number | undefined;
  /**
   * The base tables validation approved (`catalog.schema.table`). Before the statement runs, the engine's own plan
   * lists the relations it will read; one outside this list refuses the statement ('forbidden'), naming it.
   */
  reads: readonly string[];
};

/** The refusal when the engine's plan reads a relation validation did not approve. */
export const unapprovedRead = (relation: string) =>
  new EngineError(
    'forbidden',
    `The engine's plan reads ${relation}, which validation did not approve (the statement names it differently from how the engine resolves it, or it is a catalog or system relation); the statement was not run.`,
  );

export const tooLarge = (limit: number) =>
  new EngineError(
    'too_large',
    `The result is larger than ${limit} bytes (SVC_MAX_RESULT_BYTES): select fewer rows or columns, or aggregate.`,
  );

export interface QueryEngine {
  readonly kind: 'embedded' | 'trino';
  /** Column metadata of every table in the given catalogs (catalogs the engine lacks are skipped). */
  columns(catalogs: readonly string[]): Promise<CatalogColumn[]>;
  /** Estimated bytes the statement would read, as the service user; undefined when the engine cannot tell. */
  estimateBytes(sql: string): Promise<number | undefined>;
  /**
   * The most that `estimateBytes` can count for one scan of the whole table (`catalog.schema.table`), from the
   * table's statistics, whatever columns or filter the scan has; undefined when the engine cannot prove a bound.
   */
  scanBound(table: string): Promise<number | undefined>;
  /** Runs a validated read-only statement as the caller; a result above `maxBytes` is refused ('too_large'). */
  execute(sql: string, caller: EngineCaller, opts: ExecuteOptions): Promise<EngineResult>;
  close(): Promise<void>;
}
