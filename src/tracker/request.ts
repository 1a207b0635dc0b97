import type { Context } from 'hono';
import type { z } from 'zod';
import type { AppEnv } from '../platform/http.ts';
import { invalidParameter } from './errors.ts';

/**
 * The request message of an MLflow endpoint: the JSON body of a POST/PATCH/DELETE, or the query string of a GET
 * (a repeated key becomes a list, as the client sends `experiment_ids=1&experiment_ids=2`). Validated by `schema`;
 * a failure is INVALID_PARAMETER_VALUE naming each field, in MLflow's words where it has some.
 */
export async function readRequest<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.infer<S>> {
  const raw = c.req.method === 'GET' ? queryMessage(c) : await jsonBody(c);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map(String).join('.');
    throw invalidParameter(field ? `Invalid value for parameter '${field}': ${issue.message}` : issue.message);
  }
  return parsed.data;
}

function queryMessage(c: Context<AppEnv>): Record<string, string | string[]> {
  const all = c.req.queries();
  const out: Record<string, string | string[]> = {};
  for (const [key, values] of Object.entries(all)) out[key] = values.length === 1 ? values[0]! : values;
  return out;
}

async function jsonBody(c: Context<AppEnv>): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw invalidParameter('The request body is not valid JSON.');
  }
}
