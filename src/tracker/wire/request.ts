import type { Context } from 'hono';
import type { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import { invalidParameter } from '../errors.ts';

// The one place a request message is read: the JSON body of a POST/PATCH/DELETE, or the query string of a GET (a
// repeated key becomes a list, as the client sends `experiment_ids=1&experiment_ids=2`). The schema parses it into
// typed values and applies MLflow's rules; a failure is INVALID_PARAMETER_VALUE in MLflow's words.

const API_DOCS = 'See the API docs for more information about request parameters.';

export async function readRequest<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  return parseMessage(schema, c.req.method === 'GET' ? queryMessage(c) : await jsonBody(c));
}

/**
 * A DELETE's message: MLflow's client sends it as a JSON body; some callers (browsers, curl) put it in the query
 * string instead, so an empty body falls back to the query.
 */
export async function readDeleteRequest<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  const body = await jsonBody(c);
  const empty = body && typeof body === 'object' && Object.keys(body).length === 0;
  return parseMessage(schema, empty && Object.keys(c.req.queries()).length > 0 ? queryMessage(c) : body);
}

/** Parses a message already read; the schema's own refusals (TrackerError) pass through as thrown. */
export function parseMessage<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw invalidParameter(issueMessage(parsed.error.issues[0]!));
}

/** MLflow's handler wording: a missing required field, or a value of the wrong type with its Python type. */
function issueMessage(issue: z.core.$ZodIssue): string {
  const path = fieldPath(issue.path);
  if (issue.code === 'custom' && issue.params?.['message']) return String(issue.params['message']);
  const input = (issue as { input?: unknown }).input;
  if (input === undefined || input === null || (issue.code === 'custom' && issue.params?.['missing'])) {
    return `Missing value for required parameter '${path}'. ${API_DOCS}`;
  }
  return `Invalid value ${JSON.stringify(input)} for parameter '${path}' supplied: Hint: Value was of type '${pythonType(input)}'. ${API_DOCS}`;
}

/** `metrics[0].value`, as MLflow names a field inside a list. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : out ? `${out}.${String(p)}` : String(p)), '');
}

function pythonType(value: unknown): string {
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (Array.isArray(value)) return 'list';
  return 'dict';
}

function queryMessage(c: Context<AppEnv>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, values] of Object.entries(c.req.queries())) out[key] = values.length === 1 ? values[0]! : values;
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
