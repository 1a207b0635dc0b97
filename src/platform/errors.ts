// The one error type the HTTP services throw. The app factory maps it to problem+json (RFC 9457);
// anything else becomes a 500 that says only "internal error" and the request id.

export type FieldError = { location: string; message: string };

export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; [key: string]: unknown } = {},
    /** Response headers the answer needs (Retry-After on a 429 or 503). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
  }
}

export const badRequest = (detail: string, extra?: ProblemError['extra']) => new ProblemError(400, 'Bad Request', detail, extra);
export const unauthorized = (detail: string) => new ProblemError(401, 'Unauthorized', detail);
export const forbidden = (detail: string) => new ProblemError(403, 'Forbidden', detail);
export const notFound = (detail: string) => new ProblemError(404, 'Not Found', detail);
export const conflict = (detail: string) => new ProblemError(409, 'Conflict', detail);
export const payloadTooLarge = (detail: string, extra?: ProblemError['extra']) => new ProblemError(413, 'Payload Too Large', detail, extra);
export const unprocessable = (detail: string, extra?: ProblemError['extra']) =>
  new ProblemError(422, 'Unprocessable Content', detail, extra);
export const badGateway = (detail: string) => new ProblemError(502, 'Bad Gateway', detail);
export const unavailable = (detail: string, headers?: Record<string, string>) =>
  new ProblemError(503, 'Service Unavailable', detail, {}, headers);
