import type { AuthError } from './errors.ts';

// The one mapping of an AuthError to HTTP, so every service answers alike: 401 with an RFC 6750 challenge, or 503
// when the issuer cannot be reached. A service that speaks problem+json uses authProblemResponse; the tracker (MLflow's
// wire format) takes the pieces and writes its own body.

export type AuthProblem = {
  status: 401 | 503;
  title: string;
  detail: string;
  /** MLflow's error code for the same case, for the tracker. */
  mlflowCode: 'UNAUTHENTICATED' | 'TEMPORARILY_UNAVAILABLE';
  headers: Record<string, string>;
};

// RFC 6750 §3: auth-param values are quoted strings; keep them to printable ASCII without quote or backslash.
const quoted = (value: string) => `"${value.replace(/[^\x20-\x7e]|["\\]/g, ' ')}"`;

export function authProblem(err: AuthError, realm = 'svc'): AuthProblem {
  const { failure, detail } = err;
  if (failure.kind === 'issuer_unavailable') {
    return {
      status: 503,
      title: 'Service Unavailable',
      detail,
      mlflowCode: 'TEMPORARILY_UNAVAILABLE',
      headers: { 'Retry-After': '5' },
    };
  }
  // A request with no credentials gets the bare challenge: RFC 6750 §3.1 says it SHOULD NOT carry an error code.
  const challenge =
    failure.kind === 'no_token'
      ? `Bearer realm=${quoted(realm)}`
      : `Bearer realm=${quoted(realm)}, error="invalid_token", error_description=${quoted(detail)}`;
  return {
    status: 401,
    title: 'Unauthorized',
    detail,
    mlflowCode: 'UNAUTHENTICATED',
    headers: { 'WWW-Authenticate': challenge },
  };
}

/** problem+json (RFC 9457) with the challenge header, shaped like the platform's other errors. */
export function authProblemResponse(err: AuthError, requestId?: string, realm?: string): Response {
  const problem = authProblem(err, realm);
  const body = { type: 'about:blank', title: problem.title, status: problem.status, detail: problem.detail, requestId };
  return new Response(JSON.stringify(body), {
    status: problem.status,
    headers: {
      'Content-Type': 'application/problem+json',
      ...(requestId ? { 'X-Request-Id': requestId } : {}),
      ...problem.headers,
    },
  });
}
