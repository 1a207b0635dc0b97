import { z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';

// What every service's document shares, declared once as components and referred to by each route: the
// problem+json error (as problemResponse and authProblemResponse write it) and who the caller is (the ingress's
// identity headers, or a bearer token under SVC_AUTH_MODE=jwt).

export const PROBLEM_TYPE = 'application/problem+json';

/**
 * Text a request gives to be stored: Postgres's text and jsonb refuse NUL (U+0000), so it is refused here as a 400
 * naming the field, and the document's `pattern` says so, instead of a 500 from the database.
 */
export const storableText = () => z.string().regex(/^[^\u0000]*$/, 'must not contain a NUL character (U+0000)');

// What String.prototype.trim removes, spelled out: a regex engine's \s is not the same set everywhere (Python's
// holds \x1c-\x1f, not U+FEFF), and a client generating from the document must agree with the server.
const TRIMMED = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const FILLED = `^[^\\u0000]*[^${TRIMMED}\\u0000][^\\u0000]*$`;

/**
 * storableText, trimmed, that must not be empty once trimmed (`empty` says so) and at most `max` long: the document's
 * pattern says what trim().min(1) means, so only text the server takes is described as valid.
 */
export const filledText = (max: number, empty?: string) => storableText().trim().min(1, empty).max(max).openapi({ pattern: FILLED });

export const problemSchema = z
  .looseObject({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    requestId: z.string().optional(),
    errors: z
      .array(z.object({ location: z.string(), message: z.string() }))
      .optional()
      .describe('Every failing field of a 400, not only the first'),
  })
  .describe('RFC 9457 problem details; some answers add fields of their own (a rejected statement its `sql`, the cost gate `cost_bytes`)');

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' as const } } };

/** Each status a service answers with a problem, as a named response component. */
const PROBLEMS = {
  400: ['BadRequest', 'The request is invalid: `errors` lists every failing field'],
  401: ['Unauthorized', 'No caller identity, or a token that does not verify (WWW-Authenticate says which)'],
  403: ['Forbidden', 'The policy refuses the caller'],
  404: ['NotFound', 'No such resource, or one the caller may not see'],
  409: ['Conflict', 'The resource is in a state that refuses the request'],
  413: ['ContentTooLarge', 'The request, its cost or its result is larger than a limit allows'],
  415: ['UnsupportedMediaType', 'The request body is not of a media type the operation declares (JSON)'],
  422: ['UnprocessableContent', 'The request is well-formed but cannot be answered'],
  429: ['TooManyRequests', "The caller's rate limit is spent"],
  500: ['InternalError', 'internal error: the request id finds the cause in the log'],
  502: ['BadGateway', 'An upstream (the language model gateway) failed'],
  503: ['ServiceUnavailable', 'A dependency cannot be reached, or every sandbox is busy'],
  504: ['GatewayTimeout', 'The query engine did not answer in time'],
} as const;

export type ProblemStatus = keyof typeof PROBLEMS;

/** The problem answers of a route, as references to the shared components; every route may answer 500. */
export function problems(...statuses: ProblemStatus[]): Record<string, { $ref: string }> {
  const all = [...new Set<ProblemStatus>([...statuses, 500])];
  return Object.fromEntries(all.map((s) => [String(s), { $ref: `#/components/responses/${PROBLEMS[s][0]}` }]));
}

/** A JSON answer of a route. */
export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** A JSON request body; required, so a body of another type is refused like a malformed one, never skipped. */
export const jsonBody = <T extends z.ZodType>(schema: T) => ({ required: true, content: { 'application/json': { schema } } });

/** Security schemes by name; a service may add its own (the runtime's session cookie). */
export const IDENTITY_SCHEMES = {
  userId: {
    type: 'apiKey',
    in: 'header',
    name: 'X-User-Id',
    description: "The caller's user id, set by the ingress (SVC_AUTH_MODE=headers)",
  },
  queryUser: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Query-User',
    description: 'The user an agent asks on behalf of; wins over X-User-Id (SVC_AUTH_MODE=headers)',
  },
  userRole: {
    type: 'apiKey',
    in: 'header',
    name: 'X-User-Role',
    description: "The caller's roles, comma-separated (svc-admin, svc-engineer, svc-analyst, svc-user, svc-viewer)",
  },
  userGroups: { type: 'apiKey', in: 'header', name: 'X-User-Groups', description: "The caller's groups, comma-separated" },
  userToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-User-Token',
    description: "The caller's access token, passed on to Trino; under SVC_AUTH_MODE=jwt a token read after Authorization",
  },
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'SVC_AUTH_MODE=jwt: a token from the identity provider, verified by the service (docs/auth.md)',
  },
} as const;

/** What the ingress sends, the least it must send, or a bearer token: any one of these identifies the caller. */
export const CALLER_SECURITY: Record<string, string[]>[] = [
  { userId: [], userRole: [], userGroups: [], userToken: [] },
  { userId: [] },
  { queryUser: [] },
  { bearer: [] },
];

/** Puts the shared components into a registry: the Problem schema, a response per problem status, the schemes. */
export function registerComponents(registry: OpenAPIHono['openAPIRegistry']): void {
  registry.register('Problem', problemSchema);
  const problem = { $ref: '#/components/schemas/Problem' };
  for (const [status, [name, description]] of Object.entries(PROBLEMS)) {
    const headers = status === '429' || status === '503' ? retryAfter : undefined;
    registry.registerComponent('responses', name, {
      description,
      ...(headers ? { headers } : {}),
      content: { [PROBLEM_TYPE]: { schema: problem } },
    });
  }
  for (const [name, scheme] of Object.entries(IDENTITY_SCHEMES)) registry.registerComponent('securitySchemes', name, scheme);
}
