import { ObjectStoreError } from './errors.ts';

type SdkError = Error & { Code?: string; code?: string; $metadata?: { httpStatusCode?: number }; cause?: unknown };

const DENIED = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'AllAccessDisabled',
  'CredentialsProviderError',
]);
const NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);

// One place that turns what the AWS SDK throws into the port's error codes, with a message a person can act on:
// which store, which endpoint, what to check. Secrets never appear: only the access key id's absence or presence.
export function mapS3Error(err: unknown, ctx: { what: string; where: string; endpoint: string; bucket: string }): ObjectStoreError {
  if (err instanceof ObjectStoreError) return err;
  const e = (err ?? {}) as SdkError;
  const name = e.name || e.Code || '';
  const status = e.$metadata?.httpStatusCode;
  const networkCode = e.code ?? (e.cause as SdkError | undefined)?.code;
  const reason = e.message || name || String(err);
  const prefix = `${ctx.what} in ${ctx.where} (endpoint ${ctx.endpoint})`;

  if (name === 'NoSuchBucket') {
    return new ObjectStoreError('NO_SUCH_BUCKET', `${prefix}: bucket '${ctx.bucket}' does not exist; create it or fix the artifact root`, {
      cause: err,
    });
  }
  if (DENIED.has(name) || status === 403) {
    return new ObjectStoreError('ACCESS_DENIED', `${prefix}: access denied (${name || status}); check the access key id and secret`, {
      cause: err,
    });
  }
  if (name === 'NoSuchKey') return new ObjectStoreError('NOT_FOUND', `${prefix}: no such object`, { cause: err });
  if ((networkCode && NETWORK.has(networkCode)) || name === 'TimeoutError' || name === 'RequestTimeout') {
    return new ObjectStoreError('UNREACHABLE', `${prefix}: the endpoint cannot be reached (${networkCode ?? name})`, { cause: err });
  }
  return new ObjectStoreError('FAILED', `${prefix} failed: ${reason}${status ? ` (HTTP ${status})` : ''}`, { cause: err });
}
