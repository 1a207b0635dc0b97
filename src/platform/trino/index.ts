import { TrinoError, type TrinoIdentity } from './statement.ts';

export { explainIo, relationsRead, type IoPlan } from './io-plan.ts';

// Trino as the services reach it: one statement at a time, as the caller (with the caller's own token, so Trino's
// row filters and column masks apply) or as the configured service user.
export {
  quoteIdent,
  quoteLiteral,
  runStatement,
  TrinoError,
  type StatementOptions,
  type TrinoColumn,
  type TrinoConnection,
  type TrinoErrorKind,
  type TrinoIdentity,
  type TrinoResult,
} from './statement.ts';

/** The caller as Trino must see them: their name and their own token (the ingress's X-User-Token, or the JWT). */
export function callerIdentity(caller: { user: string; token?: string | undefined }): TrinoIdentity {
  if (!caller.token)
    throw new TrinoError(
      'unauthenticated',
      "The request carries no X-User-Token, and Trino runs every statement with the caller's own token.",
    );
  return { user: caller.user, token: caller.token };
}

/** The service's own identity (SVC_TRINO_SERVICE_USER and SVC_TRINO_SERVICE_TOKEN); `purpose` says what needs it. */
export function serviceIdentity(settings: { serviceUser: string; serviceToken?: string | undefined }, purpose: string): TrinoIdentity {
  if (!settings.serviceToken)
    throw new TrinoError('unavailable', `SVC_TRINO_SERVICE_TOKEN is not set, so the service cannot ${purpose} in Trino.`);
  return { user: settings.serviceUser, token: settings.serviceToken };
}
