import { serve } from '@hono/node-server';
import { zValidator } from '@hono/zod-validator';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import { requestId } from 'hono/request-id';
import { HTTPException } from 'hono/http-exception';
import { routePath } from 'hono/route';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { allowedMethods } from './allowed-methods.ts';
import { AuthError, authProblemResponse, createCallerResolver, type CallerResolver } from './auth/index.ts';
import { isDatabaseBusy, sqlState } from './sql-state.ts';
import { ProblemError, unavailable } from './errors.ts';
import { eventLoopDelay, watchEventLoop } from './event-loop.ts';
import type { Caller } from './identity.ts';
import type { Logger } from './log.ts';
import type { ServiceMetrics } from './metrics.ts';
import { tracingMetrics } from './tracing.ts';
import { inRequest } from './request-scope.ts';
import type { PolicyEngine } from './policy/types.ts';

export type AppEnv = { Variables: { requestId: string; log: Logger; caller: Caller; callers: CallerResolver } };
export type ErrorMapper = (err: unknown, c: Context<AppEnv>) => Response;

export type AppOptions = {
  service: string;
  logger: Logger;
  metrics: ServiceMetrics;
  /** Readiness beyond liveness, e.g. the database answers. */
  ready?: () => Promise<boolean>;
  /** A service whose wire format is not problem+json (the tracker speaks MLflow's) brings its own mapper. */
  mapError?: ErrorMapper;
  /**
   * The service's own domain errors (an engine's refusal, a file it cannot read), each as the problem it is answered
   * with; undefined for anything else. The one place a service turns its errors into HTTP.
   */
  domainProblem?: (err: unknown) => ProblemError | undefined;
  /** The largest request body read whole (SVC_MAX_JSON_BYTES); default DEFAULT_MAX_BODY_BYTES. */
  maxBodyBytes?: number;
  /** Routes that stream their body to a store under limits of their own (uploads); the body limit skips them. */
  streamsBody?: (c: Context) => boolean;
  /** The policy engine: /ready needs it ready and reports its bundle revision, /metrics adds its counters. */
  policy?: Pick<PolicyEngine, 'revision' | 'metrics' | 'ready'>;
  /** Who the caller is (SVC_AUTH_MODE): requireCaller asks it. Default: the ingress's headers. */
  callers?: CallerResolver;
};

/** Today's behaviour and `svc dev`'s: the caller as the ingress's X-User-* headers name it. */
export const HEADER_CALLERS: CallerResolver = createCallerResolver(
  { mode: 'headers', tokenHeader: 'X-Auth-Request-Access-Token' },
  { knownRoles: () => [] },
);

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const QUIET_PATHS = new Set(['/health', '/ready', '/metrics']);

export function createApp(opts: AppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { logger, metrics } = opts;

  // An inbound X-Request-Id is kept when it is a plain token of at most 128 characters, else replaced.
  app.use(requestId({ limitLength: 128 }));
  const callers = opts.callers ?? HEADER_CALLERS;
  app.use(async (c, next) => {
    const id = c.var.requestId;
    c.set('callers', callers);
    c.set('log', logger.child({ requestId: id }));
    const started = performance.now();
    // The request's one context frame: its decisions carry its id into the decision log, its spans join its trace.
    await inRequest(id, next);
    const seconds = (performance.now() - started) / 1000;
    const route = c.finalized ? routeOf(c) : 'unmatched';
    metrics.httpRequests.inc({ method: c.req.method, route, status: String(c.res.status) });
    metrics.httpDuration.observe({ method: c.req.method, route }, seconds);
    const line = {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round(seconds * 1e4) / 10,
      outcome: c.res.status >= 500 ? 'error' : c.res.status >= 400 ? 'rejected' : 'ok',
    };
    if (QUIET_PATHS.has(c.req.path)) c.var.log.debug(line, 'request');
    else c.var.log.info(line, 'request');
  });

  // Before any route reads a body: a declared length above the limit is refused unread, a chunked body as soon as it
  // passes the limit, so no request can make a service hold or parse more than this.
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const limit = bodyLimit({
    maxSize: maxBodyBytes,
    onError: () => {
      throw new HTTPException(413, {
        message: `The request body is larger than ${maxBodyBytes} bytes (SVC_MAX_JSON_BYTES): send less at a time.`,
      });
    },
  });
  app.use((c, next) => (opts.streamsBody?.(c) ? next() : limit(c, next)));

  // Liveness, and how late this process's event loop runs (ms, p99 and max over the last ~10 s): a service that
  // stops answering because the thread is busy shows here first, on the /health of every service in the process.
  watchEventLoop();
  app.get('/health', (c) => c.json({ status: 'ok', service: opts.service, event_loop_delay_ms: eventLoopDelay() }));
  app.get('/ready', async (c) => {
    const ok =
      (opts.ready ? await opts.ready().catch(() => false) : true) && (opts.policy ? await opts.policy.ready().catch(() => false) : true);
    const policy = opts.policy ? { policy: { revision: opts.policy.revision ?? null } } : {};
    return c.json({ status: ok ? 'ready' : 'unavailable', service: opts.service, ...policy }, ok ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const text = [await metrics.registry.metrics(), (await opts.policy?.metrics?.()) ?? '', await tracingMetrics()].join('');
    return c.text(text, 200, { 'Content-Type': metrics.registry.contentType });
  });

  const mapError = opts.mapError ?? ((err: unknown, c: Context<AppEnv>) => problemResponse(opts.domainProblem?.(err) ?? err, c));
  app.onError((err, c) => mapError(err, c));
  // Looked up when first needed: by then every route is mounted.
  let methodsAt: ((path: string) => string[]) | undefined;
  app.notFound((c) => {
    const allowed = (methodsAt ??= allowedMethods(app.routes))(c.req.path);
    // a route of this method that answered "not here" itself (an unknown asset under /ui/*) is a 404 as well
    if (allowed.length === 0 || allowed.includes(c.req.method))
      return mapError(new ProblemError(404, 'Not Found', `No route for ${c.req.method} ${c.req.path}.`), c);
    const detail = `${c.req.path} does not answer ${c.req.method}: use ${allowed.join(', ')}.`;
    return mapError(new ProblemError(405, 'Method Not Allowed', detail, {}, { Allow: allowed.join(', ') }), c);
  });
  return app;
}

function routeOf(c: Context): string {
  try {
    return routePath(c, -1) || c.req.path;
  } catch {
    return 'unmatched';
  }
}

const TITLES: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found', 413: 'Content Too Large', 415: 'Unsupported Media Type' };

/** When a caller answered 503 for a busy database may try again. */
const DATABASE_RETRY_AFTER_S = 5;

/** SQLSTATEs of text Postgres cannot store: character_not_in_repertoire (a NUL), untranslatable_character. */
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);

/** problem+json (RFC 9457). A 5xx says only "internal error" and the request id; the stack goes to the log. */
export function problemResponse(err: unknown, c: Context<AppEnv>): Response {
  const requestId = c.get('requestId');
  if (err instanceof AuthError) return authProblemResponse(err, requestId);
  let problem: ProblemError;
  if (err instanceof ProblemError) problem = err;
  else if (err instanceof HTTPException && err.status === 415) {
    // the request-body gate of an OpenAPI route: a body whose media type the operation does not declare
    const type = c.req.header('content-type') || 'none';
    problem = new ProblemError(
      415,
      TITLES[415]!,
      `The request body's Content-Type (${type}) is not one this operation accepts: send JSON with Content-Type: application/json (GET /openapi.json gives each operation's body).`,
    );
  } else if (err instanceof HTTPException && err.status < 500) {
    problem = new ProblemError(err.status, TITLES[err.status] ?? 'Bad Request', err.message || 'The request was refused.');
  } else if (UNSTORABLE_TEXT.has(sqlState(err) ?? '')) {
    // valid JSON, but Postgres text holds no NUL (U+0000): the caller's to fix, and the statement changed nothing
    problem = new ProblemError(400, 'Bad Request', 'Text in the request holds a character that cannot be stored (U+0000, NUL): remove it.');
  } else if (isDatabaseBusy(err)) {
    c.get('log')?.warn({ err }, 'database busy');
    problem = unavailable(
      sqlState(err) === '57014'
        ? 'The request ran a database statement past its time limit (SVC_DB_STATEMENT_TIMEOUT_MS): narrow the request, or try again later.'
        : 'The database is busy finishing a statement that ran past its time limit: try again in a few seconds.',
      { 'Retry-After': String(DATABASE_RETRY_AFTER_S) },
    );
  } else {
    c.get('log')?.error({ err }, 'unhandled error');
    problem = new ProblemError(500, 'Internal Server Error', `internal error (request ${requestId})`);
  }
  const body = {
    type: 'about:blank',
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    requestId,
    ...problem.extra,
  };
  return new Response(JSON.stringify(body), {
    status: problem.status,
    headers: { ...problem.headers, 'Content-Type': 'application/problem+json', 'X-Request-Id': requestId ?? '' },
  });
}

/**
 * Sets `c.var.caller`: from a verified token (SVC_AUTH_MODE=jwt) or the ingress's headers. No identity, or a token
 * that does not verify, is a 401 with its challenge; an issuer that cannot be reached is a 503.
 */
export const requireCaller: MiddlewareHandler<AppEnv> = createMiddleware<AppEnv>(async (c, next) => {
  c.set('caller', await c.var.callers.callerFrom(c.req.raw.headers));
  await next();
});

/** zod validation whose failure is a 400 problem listing every failing field, not only the first. */
export function validate<T extends z.ZodType, Target extends 'json' | 'query' | 'param' | 'header'>(target: Target, schema: T) {
  return zValidator(target, schema, (result) => {
    if (!result.success) throw validationProblem(target, result.error);
  });
}

/** The 400 a failed validation is: every failing field with where it is (`json.question`) and why. */
export function validationProblem(
  target: 'json' | 'query' | 'param' | 'header' | 'cookie' | 'form',
  error: Pick<z.ZodError, 'issues'>,
): ProblemError {
  const errors = error.issues.map((issue) => ({
    location: [target, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  return new ProblemError(
    400,
    'Bad Request',
    `Invalid ${target === 'json' ? 'request body' : target}: ${errors.map((e) => `${e.location}: ${e.message}`).join('; ')}`,
    { errors },
  );
}

/** A start-up failure with a message an operator can act on; the CLI prints it without a stack and exits 1. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** Listens, or says in one line which setting to change when the port is taken or not ours to bind. */
export async function listen(app: Hono<AppEnv>, portNumber: number, host: string | undefined, change: string): Promise<RunningServer> {
  try {
    return await startServer(app, portNumber, host);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'EADDRINUSE') throw new StartupError(`port ${portNumber} is in use: set ${change} to a free port`, { cause: err });
    if (code === 'EACCES')
      throw new StartupError(`port ${portNumber} needs privileges this process does not have: set ${change} to a port above 1023`, {
        cause: err,
      });
    if (code === 'EADDRNOTAVAIL')
      throw new StartupError(`${host} is not an address of this machine: set SVC_HOST to one that is`, { cause: err });
    throw err;
  }
}

export type RunningServer = { url: string; port: number; close(): Promise<void> };

export function startServer(app: Hono<AppEnv>, port: number, hostname = '0.0.0.0'): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info) => {
      const shown = hostname === '0.0.0.0' ? 'localhost' : hostname;
      resolve({
        url: `http://${shown}:${info.port}`,
        port: info.port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
    server.once('error', reject);
  });
}

export type Status = ContentfulStatusCode;
