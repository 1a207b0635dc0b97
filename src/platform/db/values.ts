// Text-format parsers both adapters install, so the same SQL yields the same JavaScript values (see types.ts).

export { OID, parseInt8, parseNumeric, parseTimestamp } from './parsers.mjs';

/** bytea text output is hex (`\x0102`); a copy in a plain Uint8Array, not a pooled Buffer. */
export const parseBytea = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.slice(2), 'hex'));

/** JSON parameters arrive as JSON text (the port's convention); an object is stringified, as PGlite does. */
export const serializeJson = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

// Reading a database error's SQLSTATE needs no driver: it lives apart so the HTTP error mapping can use it.
export { isDatabaseBusy, isUniqueViolation, sqlState } from '../sql-state.ts';
