import type { Context } from 'hono';
import type { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import { invalidParameter } from '../errors.ts';
import { QueryValues } from './fields.ts';

// The one place a request message is read: the JSON body of a POST/PATCH/DELETE, or the query string of a GET (a
// repeated key becomes a list, as the client sends `experiment_ids=1&experiment_ids=2`). The schema parses it into
// typed values and applies MLflow's rules; a failure is INVALID_PARAMETER_VALUE in MLflow's words.

const API_DOCS = 'See the API docs for more information about request parameters.';

export async function readRequest<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  if (c.req.method === 'GET') return parseMessage(schema, queryMessage(c));
  const text = await c.req.text();
  return parseMessage(schema, jsonOf(text), text);
}

/** A message carried in the query string of any method (MLflow's upload-artifact: the body is the file). */
export function readQuery<S extends z.ZodType>(c: Context<AppEnv>, schema: S): z.output<S> {
  return parseMessage(schema, queryMessage(c));
}

/**
 * A DELETE's message: MLflow's client sends it as a JSON body; some callers (browsers, curl) put it in the query
 * string instead, so an empty body falls back to the query.
 */
export async function readDeleteRequest<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  const body = jsonOf(text);
  const empty = body && typeof body === 'object' && Object.keys(body).length === 0;
  return empty && Object.keys(c.req.queries()).length > 0 ? parseMessage(schema, queryMessage(c)) : parseMessage(schema, body, text);
}

/** Parses a message already read; the schema's own refusals (TrackerError) pass through as thrown. */
export function parseMessage<S extends z.ZodType>(schema: S, raw: unknown, text = ''): z.output<S> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw invalidParameter(issueMessage(parsed.error.issues[0]!, text));
}

/** MLflow's handler wording: a missing required field, or a value of the wrong type with its Python type. */
function issueMessage(issue: z.core.$ZodIssue, text: string): string {
  const path = fieldPath(issue.path);
  if (issue.code === 'custom' && issue.params?.['message']) return `${String(issue.params['message'])} ${API_DOCS}`;
  const input = (issue as { input?: unknown }).input;
  const empty = input === undefined || input === null || (Array.isArray(input) && input.length === 0 && input instanceof QueryValues);
  if (empty || (issue.code === 'custom' && issue.params?.['missing'])) {
    return `Missing value for required parameter '${path}'. ${API_DOCS}`;
  }
  const shown = input instanceof QueryValues ? input[input.length - 1] : input;
  return `Invalid value ${pythonJson(shown, issue.path, text)} for parameter '${path}' supplied: Hint: Value was of type '${pythonType(shown)}'. ${API_DOCS}`;
}

/**
 * The value as Python's json.dumps writes it (MLflow's words quote the value so): a number keeps the decimal
 * point it was sent with ("9.0", which JavaScript reads as 9), found in the body next to the field's name.
 */
function pythonJson(value: unknown, path: readonly PropertyKey[], text: string): string {
  const key = path[path.length - 1];
  if (typeof value === 'number' && typeof key === 'string' && text) {
    const literal = new RegExp(`"${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\s*:\\s*(-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)`).exec(
      text,
    )?.[1];
    if (literal !== undefined && Number(literal) === value) return literal;
  }
  return JSON.stringify(value) ?? String(value);
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

/** Every key of a query string as the list of its values; the field types take what they need of it. */
function queryMessage(c: Context<AppEnv>): Record<string, QueryValues> {
  // entries, not assignments: `?__proto__=x` is a key like any other, not the object's prototype
  return Object.fromEntries(Object.entries(c.req.queries()).map(([key, values]) => [key, QueryValues.from(values) as QueryValues]));
}

function jsonOf(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw invalidParameter('The request body is not valid JSON.');
  }
}
