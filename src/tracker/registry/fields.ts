import type { Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import { readRequest } from '../request.ts';

// Field schemas shared by the registry's request messages (MLflow's proto fields as they travel in JSON or in a
// query string).

export const required = (field: string) => z.string({ error: `Missing value for required parameter '${field}'.` });
export const optionalString = z.string().optional();
/** Versions travel as strings ("3"); a number is taken too. */
export const versionField = z.union([z.string(), z.number()], { error: "Missing value for required parameter 'version'." });
export const tagsField = z.array(z.object({ key: required('key'), value: z.string().default('') })).default([]);
/** A repeated field: a list in JSON, one or several `key=value` in a query string. */
export const stringList = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));
export const boolField = z
  .union([z.boolean(), z.enum(['true', 'false', 'True', 'False', 'TRUE', 'FALSE'])])
  .optional()
  .transform((v) => v === true || (typeof v === 'string' && v.toLowerCase() === 'true'));
export const intField = z.union([z.number().int(), z.string().regex(/^-?\d+$/, 'must be an integer').transform(Number)]).optional();

/**
 * A DELETE's message: MLflow's client sends it as a JSON body; some callers (browsers, curl) put it in the query
 * string instead, so an empty body falls back to the query.
 */
export async function readDeleteRequest<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.infer<S>> {
  const body = await c.req.text();
  if (body.trim() === '' && Object.keys(c.req.queries()).length > 0) {
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(c.req.queries())) query[k] = v.length === 1 ? v[0]! : v;
    const parsed = schema.safeParse(query);
    if (parsed.success) return parsed.data;
  }
  return readRequest(c, schema);
}
