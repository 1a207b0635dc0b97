export const OID: {
  readonly bytea: 17;
  readonly int8: 20;
  readonly json: 114;
  readonly timestamp: 1114;
  readonly numeric: 1700;
  readonly jsonb: 3802;
};
export function parseInt8(text: string): number | bigint;
export function parseNumeric(text: string): number;
export function parseTimestamp(text: string): Date;
