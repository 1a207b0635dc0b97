// The text parsers both adapters install (see types.ts), in plain JavaScript so that the PGlite worker thread
// (pglite-worker.mjs) loads the same ones under Node, tsx, vitest and Bun.

/** Type OIDs from pg_type, fixed across PostgreSQL versions. */
export const OID = Object.freeze({ bytea: 17, int8: 20, json: 114, timestamp: 1114, numeric: 1700, jsonb: 3802 });

export const parseInt8 = (text) => {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
};

export const parseNumeric = (text) => Number(text);

/** A timestamp without time zone is wall-clock time in UTC (the session zone), whatever the Node process zone. */
export const parseTimestamp = (text) => new Date(`${text.replace(' ', 'T')}Z`);
