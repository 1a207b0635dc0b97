// SQL expressions that write MLflow's JSON answers in the database, as the exact text JSON.stringify gives for the
// shapes of json.ts: compact, keys in their order, strings escaped as JavaScript does (to_json escapes the same
// characters; text in Postgres holds neither NUL nor lone surrogates). A page of whole runs is then one text value
// the server passes on, instead of thousands of rows parsed into objects and written out again.

/** A JSON string of a text expression. */
export const sqlJsonString = (expr: string) => `to_json((${expr})::text)::text`;

/** `"key":<json>` pairs joined into an object; a null member (the whole concatenation of one) is left out. */
export const sqlJsonObject = (members: string[]) => `('{' || concat_ws(',', ${members.join(', ')}) || '}')`;

/** A member `"name":value` from text that is already JSON; null when the value is null (an omitted field). */
export const sqlMember = (name: string, json: string) => `('${JSON.stringify(name)}:' || ${json})`;

/** A member holding a JSON array of the aggregated items, or null for none (MLflow leaves empty lists out). */
export const sqlArrayMember = (name: string, items: string) => `('${JSON.stringify(name)}:[' || ${items} || ']')`;

/**
 * A double as doubleJson() and JSON.stringify write it: NaN and the infinities as strings, others as JavaScript's
 * shortest round-trip number. Postgres prints the same shortest digits (extra_float_digits above 0, its default)
 * and the same fixed notation between 1e-4 and 1e15; outside that range it writes exponents as printf does
 * ("1e-05", "1.5e+16") where JavaScript writes "0.00001", "15000000000000000" and "1e-7": those few are rewritten.
 */
export function sqlJsonDouble(value: string, isNan: string): string {
  // The printf form's mantissa and exponent (aliases prefixed: this is a subquery inside the caller's statement).
  const exponent = `(SELECT CASE
      WHEN x_e BETWEEN 15 AND 20 THEN (SELECT round(x_t::numeric, x_k - 1 - x_e)::text FROM generate_series(1, 17) x_k
                                       WHERE round(x_t::numeric, x_k - 1 - x_e)::float8 = (${value}) ORDER BY x_k LIMIT 1)
      WHEN x_e BETWEEN -6 AND -5 THEN x_sign || '0.' || repeat('0', -x_e - 1) || x_digits
      ELSE x_m || 'e' || CASE WHEN x_e < 0 THEN '-' ELSE '+' END || abs(x_e)
    END
    FROM (SELECT x_t, split_part(x_t, 'e', 1) AS x_m, split_part(x_t, 'e', 2)::int AS x_e FROM (SELECT (${value})::text AS x_t) x_text) x_p,
    LATERAL (SELECT CASE WHEN x_m LIKE '-%' THEN '-' ELSE '' END AS x_sign, replace(ltrim(x_m, '-'), '.', '') AS x_digits) x_q)`;
  return `(CASE
    WHEN ${isNan} OR ${value} = 'NaN'::float8 THEN '"NaN"'
    WHEN ${value} = 'Infinity'::float8 THEN '"Infinity"'
    WHEN ${value} = '-Infinity'::float8 THEN '"-Infinity"'
    WHEN ${value} = 0 THEN '0'
    WHEN abs(${value}) >= 1e-4::float8 AND abs(${value}) < 1e15::float8 THEN (${value})::text
    ELSE ${exponent}
  END)`;
}
