// The SQL port. Both adapters run the same SQL text with `$1..$n` parameters and return the same JavaScript types:
//   int2/int4/int8/count(*)  number (an int8 beyond 2^53 comes back as bigint rather than a wrong number)
//   numeric                  number (precision of a double: keep exact money or ids out of numeric)
//   float4/float8            number          bool       boolean         text/varchar/uuid  string
//   timestamptz, timestamp   Date (timestamp without zone read as UTC; every session runs in TimeZone UTC)
//   date                     Date at UTC midnight
//   json/jsonb               parsed value    arrays     arrays of the element type
//   vector                   its text form '[1,2,3]' (parse with JSON.parse when numbers are needed); vector[] is
//                            not aligned across adapters: select vectors one per column
//   bytea                    Uint8Array (never a Buffer, so results compare equal across adapters)
//   NULL                     null; an undefined parameter is sent as NULL
//
// Parameter convention: scalars, Dates, Uint8Arrays and arrays of scalars (`= ANY($1::text[])`) directly; objects
// and lists meant as JSON as JSON text with a `$n::jsonb` cast; vectors as text from toVector() with `$n::vector`.
// query() runs exactly one statement; exec() runs a script of several statements without parameters.

export type QueryOptions = {
  /**
   * Plan the statement with this call's values every time. By default a statement with parameters is prepared once
   * per connection, and after five runs Postgres may settle on a generic plan that ignores the values: wrong for a
   * statement whose best plan depends on them (a search filter that matches 5 rows or 5 000).
   */
  planEachCall?: boolean;
};

/** A connection or a transaction: the same interface, so domain code runs inside or outside a transaction. */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations, DDL). */
  exec(script: string): Promise<void>;
  /**
   * Runs `COPY target FROM STDIN (FORMAT binary)` with `input` (made by copyInput), read piece by piece as the
   * database takes it. `target` is a table and its column list, `retrieval_chunks (id, text)`. For bulk writes: no
   * text to build or parse on either side. Inside a transaction it commits or rolls back with it; a row the
   * database refuses rejects with the database's error, and no row of the COPY is kept.
   */
  copyIn(target: string, input: Iterable<Uint8Array>): Promise<void>;
}

export interface Database extends Sql {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Commits when `fn` resolves, rolls back when it throws. Use only `tx` inside `fn`: on PGlite (one connection)
   * awaiting the outer database inside `fn` waits for the transaction itself and never returns.
   */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * Runs `COPY (select) TO STDOUT (FORMAT binary)` and hands the output to `onChunk` as it arrives (readCopyRows
   * decodes it). For bulk reads: no text conversion on either side, and on Postgres nothing held whole in memory.
   * One statement, so one snapshot. COPY takes no parameters: quote literals with sqlLiteral(). When `onChunk`
   * throws, the rest of the output is drained and the promise rejects with that error.
   */
  copyOut(select: string, onChunk: (chunk: Uint8Array) => void, options?: CopyOutOptions): Promise<void>;
  /** True when the database answers within a few seconds; false after close(); never throws (for /ready). */
  ping(): Promise<boolean>;
  /** Idempotent. */
  close(): Promise<void>;
}

export type CopyOutOptions = {
  /**
   * Session settings for the statement (planner settings: `{ enable_sort: 'off' }`). On Postgres a COPY has a
   * connection of its own and they are sent as it opens, at no extra round trip; PGlite, whose one connection every
   * statement shares, runs the statement without them.
   */
  settings?: Readonly<Record<string, string>>;
};

export type PgConnection = {
  host: string;
  port: number;
  database: string;
  user: string;
  password?: string | undefined;
  /** Pool size; 10 when unset. */
  max?: number | undefined;
  /** Every statement's time limit (Postgres's statement_timeout); DEFAULT_STATEMENT_TIMEOUT_MS when unset. */
  statementTimeoutMs?: number | undefined;
};

/** `value` as a quoted SQL string literal (standard_conforming_strings, on by default on both adapters). */
export const sqlLiteral = (value: string): string => {
  if (value.includes('\0')) throw new RangeError('a SQL literal cannot hold a NUL character');
  return `'${value.replaceAll("'", "''")}'`;
};

/** The text literal of a vector, for a `$n::vector` parameter. */
export const toVector = (v: readonly number[] | Float32Array): string => `[${Array.prototype.join.call(v, ',')}]`;
