import { OpenAPIHono, type Hook } from '@hono/zod-openapi';
import { Hono } from 'hono';
import type { AuthSettings } from '../auth/index.ts';
import { validationProblem, type AppEnv } from '../http.ts';
import { CALLER_SECURITY, registerComponents } from './components.ts';
import { docsCsp, docsPage, newNonce, sendReferenceAsset } from './reference.ts';

export {
  CALLER_SECURITY,
  IDENTITY_SCHEMES,
  jsonBody,
  jsonResponse,
  PROBLEM_TYPE,
  problems,
  problemSchema,
  type ProblemStatus,
  filledText,
  storableText,
} from './components.ts';

// A service's API routes are declared with createRoute (path, method, request and response schemas), so the zod
// schema that validates a request is the one the document shows. One OpenAPIHono per resource, joined with route().

/** A request that fails its schema is the same 400 problem as `validate` gives: every failing field, one message. */
const validationHook: Hook<unknown, AppEnv, string, undefined> = (result) => {
  if (!result.success) throw validationProblem(result.target as Parameters<typeof validationProblem>[0], result.error);
};

/** An OpenAPIHono for a service's routes, validating like every other route of the platform. */
export function apiRoutes(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

export type DocumentInfo = { title: string; version: string; description: string };

/**
 * GET /openapi.json (OpenAPI 3.1, generated from the routes of `api`) and GET /docs (Scalar's reference of that
 * document, with try-it against this origin; reference.ts). All open, like the console: the description of an API is
 * no secret, every operation in it still needs a caller.
 */
export function documentRoutes(
  api: OpenAPIHono<AppEnv>,
  info: DocumentInfo,
  extra?: (registry: OpenAPIHono['openAPIRegistry']) => void,
): Hono<AppEnv> {
  registerComponents(api.openAPIRegistry);
  extra?.(api.openAPIRegistry);
  // made on first use, once per auth mode (a process has one; the mode is known from the first request)
  const doc = perMode((mode) => underAuthMode(mode, api.getOpenAPI31Document({ openapi: '3.1.0', info, security: CALLER_SECURITY })));
  const text = perMode((mode) => JSON.stringify(doc(mode)));
  return new Hono<AppEnv>()
    .get('/openapi.json', (c) => c.body(text(c.var.callers.mode), 200, { 'Content-Type': 'application/json' }))
    .get('/docs', () => {
      const nonce = newNonce();
      return new Response(docsPage(info.title, nonce), {
        headers: {
          'Content-Type': 'text/html; charset=utf-8',
          'Cache-Control': 'no-store',
          'Content-Security-Policy': docsCsp(nonce),
          'X-Content-Type-Options': 'nosniff',
        },
      });
    })
    .get('/docs/*', sendReferenceAsset);
}

type AuthMode = AuthSettings['mode'];

function perMode<T>(make: (mode: AuthMode) => T): (mode: AuthMode) => T {
  const made = new Map<AuthMode, T>();
  return (mode) => {
    if (!made.has(mode)) made.set(mode, make(mode));
    return made.get(mode)!;
  };
}
type OpenApiDocument = ReturnType<OpenAPIHono['getOpenAPI31Document']>;
type Security = Record<string, string[]>[];

/**
 * The document as this process authenticates (SVC_AUTH_MODE): under jwt a bearer token is the only way in (identity
 * headers and the runtime's session are ignored), under headers the ingress's headers (or a session) are, and a
 * token is not verified. An operation open to anyone (`security: []`) stays open.
 */
function underAuthMode(mode: AuthMode, document: OpenApiDocument): OpenApiDocument {
  const under = (security: Security): Security =>
    security.length === 0 ? security : mode === 'jwt' ? [{ bearer: [] }] : security.filter((ways) => !('bearer' in ways));
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item as Record<string, { security?: Security }>).map(([method, op]) => [
          method,
          op.security ? { ...op, security: under(op.security) } : op,
        ]),
      ),
    ]),
  );
  return { ...document, security: under(document.security ?? []), paths } as OpenApiDocument;
}
