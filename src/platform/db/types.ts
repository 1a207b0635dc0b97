// The SQL port. Both adapters run the same SQL text with `$1..$n` parameters and return the same JavaScript
// types: int2/int4/int8 and numeric as number (int8 beyond 2^53 as bigint), float as number, timestamptz as
// Date, json/jsonb parsed, arrays as arrays, vector as its text form '[1,2,3]', bytea as Uint8Array.
// Convention for parameters: scalars directly; lists and objects as JSON text with a `$n::jsonb` cast, and
// vectors as text with `$n::vector`, which both adapters pass identically.

/** A connection or a transaction: the same interface, so domain code runs inside or outside a transaction. */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface Database extends Sql {
  readonly kind: 'pglite' | 'postgres';
  /** Commits when `fn` resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /** True when the database answers; never throws (for /ready). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export type PgConnection = {
  host: string;
  port: number;
  database: string;
  user: string;
  password?: string | undefined;
  max?: number;
};

export const toVector = (v: readonly number[] | Float32Array): string => `[${Array.prototype.join.call(v, ',')}]`;

export const parseInt8 = (text: string): number | bigint => {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
};
