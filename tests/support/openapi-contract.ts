import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Hono } from 'hono';
import { expect } from 'vitest';

// A service's OpenAPI document held to what the service does: the document is valid OpenAPI 3.1, the routes it
// describes are the routes the app serves, and a real response matches the schema documented for its status.
// Shared so every service's contract test holds its document to the same checks.

export type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, Response31 | { $ref: string }> }>>;
  security?: Record<string, string[]>[];
  components: { schemas?: Record<string, unknown>; responses?: Record<string, Response31> };
};
type Response31 = { description: string; content?: Record<string, { schema: unknown }> };

/** Served but not part of the API: probes, metrics, the document itself, its page and the pages' assets. */
// The console's page and everything under /ui/ (its files, and the sign-in box's /ui/roles and /ui/me) are the page's.
const NOT_API = new Set(['/health', '/ready', '/metrics', '/openapi.json', '/docs', '/docs/*', '/']);

export async function fetchDocument(app: Hono<never> | Hono<any>): Promise<OpenApiDocument> {
  const res = await app.request('/openapi.json');
  expect(res.status).toBe(200);
  return (await res.json()) as OpenApiDocument;
}

/** The official OpenAPI 3.1 schema's verdict, with its errors when it refuses. */
export async function expectValidOpenApi31(document: OpenApiDocument): Promise<void> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as unknown as Parameters<Validator['validate']>[0]);
  expect(result.errors ?? [], 'the OpenAPI schema validator').toEqual([]);
  expect(result.valid).toBe(true);
  expect(validator.version).toBe('3.1');
}

/** Every `METHOD /path` the app answers (Hono's `:id` as OpenAPI's `{id}`), middleware and the console left out. */
export function servedRoutes(app: Hono<never> | Hono<any>): string[] {
  const routes = app.routes
    .filter((r) => r.method !== 'ALL' && !NOT_API.has(r.path) && !r.path.startsWith('/ui/'))
    .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
  return [...new Set(routes)].sort();
}

export function documentedRoutes(document: OpenApiDocument): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/** The events of a text/event-stream body, as `{ event, data }` (data lines joined by newlines, as a client does). */
export function serverSentEvents(text: string): { event?: string; data: string }[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const fields = block.split(/\r?\n/).map((line) => /^([^:]*):? ?(.*)$/.exec(line)!);
      const event = fields.find(([, name]) => name === 'event')?.[2];
      const data = fields.filter(([, name]) => name === 'data').map(([, , value]) => value);
      return { ...(event === undefined ? {} : { event }), data: data.join('\n') };
    });
}

/**
 * The response's status is documented for the operation, its content type is one the document gives for that
 * status, and its body validates against that schema (the document's components in scope for its $refs). An event
 * stream's schema is each event's, as OpenAPI 3.2's itemSchema says and schemathesis checks: every event must match.
 */
export async function expectConforms(document: OpenApiDocument, method: string, path: string, res: Response): Promise<unknown> {
  const operation = document.paths[path]?.[method.toLowerCase()];
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  let response = operation!.responses[String(res.status)];
  expect(response, `${method} ${path} documents status ${res.status}`).toBeDefined();
  if (response && '$ref' in response) response = document.components.responses?.[response.$ref.split('/').pop()!];
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const media = (response as Response31).content?.[type];
  expect(media, `${method} ${path} ${res.status} documents ${type}`).toBeDefined();
  const text = await res.text();
  const body: unknown = type.endsWith('json') ? JSON.parse(text) : type === 'text/event-stream' ? serverSentEvents(text) : text;
  const validate = ajv.compile({ ...(media!.schema as object), components: document.components });
  for (const item of type === 'text/event-stream' ? (body as unknown[]) : [body]) {
    const ok = validate(item);
    expect(validate.errors ?? [], `${method} ${path} ${res.status} against its schema`).toEqual([]);
    expect(ok).toBe(true);
  }
  return body;
}

/** The documented path template a concrete path answers to (`/dashboards/abc/share` → `/dashboards/{id}/share`). */
export function templateOf(document: OpenApiDocument, method: string, path: string): string | undefined {
  const templates = Object.keys(document.paths).filter((t) => document.paths[t]![method.toLowerCase()]);
  const matches = (t: string) => new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path);
  return templates.includes(path) ? path : templates.find(matches);
}

const documents = new WeakMap<object, Promise<OpenApiDocument>>();

/**
 * For a harness that checks every answer it gets: the response of `method url` matches the app's own document,
 * when the document has that operation (a route the app does not serve is the 404 of no operation).
 */
export async function expectAnswerDocumented(app: Hono<never> | Hono<any>, method: string, url: string, res: Response): Promise<void> {
  let pending = documents.get(app);
  if (!pending) documents.set(app, (pending = fetchDocument(app)));
  const document = await pending;
  const template = templateOf(document, method, new URL(url, 'http://svc').pathname);
  if (template) await expectConforms(document, method, template, res);
}
