import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { AuthError, authProblem } from '../platform/auth/index.ts';
import type { AppEnv } from '../platform/http.ts';

// The tracker speaks MLflow's error wire: {"error_code": "...", "message": "..."} with MLflow's status for each
// code. The client retries 5xx, so a deterministic refusal is never a 5xx.
const STATUS = {
  INVALID_PARAMETER_VALUE: 400,
  BAD_REQUEST: 400,
  INVALID_STATE: 400,
  RESOURCE_ALREADY_EXISTS: 400,
  RESOURCE_DOES_NOT_EXIST: 404,
  ENDPOINT_NOT_FOUND: 404,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  RESOURCE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  TEMPORARILY_UNAVAILABLE: 503,
} as const;

export type TrackerErrorCode = keyof typeof STATUS;

export class TrackerError extends Error {
  constructor(
    readonly code: TrackerErrorCode,
    message: string,
    /** A status other than the code's own: HTTP's own refusals (413) keep theirs, which MLflow's codes lack. */
    private readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'TrackerError';
  }
  get status(): number {
    return this.httpStatus ?? STATUS[this.code];
  }
}

export const invalidParameter = (message: string) => new TrackerError('INVALID_PARAMETER_VALUE', message);
export const doesNotExist = (message: string) => new TrackerError('RESOURCE_DOES_NOT_EXIST', message);
export const alreadyExists = (message: string) => new TrackerError('RESOURCE_ALREADY_EXISTS', message);
export const invalidState = (message: string) => new TrackerError('INVALID_STATE', message);
export const permissionDenied = (message: string) => new TrackerError('PERMISSION_DENIED', message);

/** The tracker's one error mapper (given to createApp). Anything not a TrackerError is a 500 without details. */
export function trackerErrorResponse(err: unknown, c: Context<AppEnv>): Response {
  let error: TrackerError;
  let headers: Record<string, string> = {};
  if (err instanceof AuthError) {
    const problem = authProblem(err);
    error = new TrackerError(problem.mlflowCode, problem.detail);
    headers = problem.headers;
  } else if (err instanceof TrackerError) error = err;
  // HTTP's own refusals (the body limit's 413) keep their status, with MLflow's BAD_REQUEST as the code: the client
  // shows the message and, the status being below 500 and not 408 or 429, does not retry.
  else if (err instanceof HTTPException && err.status < 500)
    error = new TrackerError('BAD_REQUEST', err.message || 'Bad request', err.status);
  else {
    c.get('log')?.error({ err }, 'unhandled error');
    error = new TrackerError('INTERNAL_ERROR', `internal error (request ${c.get('requestId')})`);
  }
  return new Response(JSON.stringify({ error_code: error.code, message: error.message }), {
    status: error.status,
    headers: { ...headers, 'Content-Type': 'application/json' },
  });
}
