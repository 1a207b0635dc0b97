import { unauthorized } from './errors.ts';

// The caller as the forward-auth ingress describes it. Trusted as received (the ingress strips client copies);
// no identity means no access.
export type Caller = {
  user: string;
  roles: string[];
  groups: string[];
  token?: string;
};

type Headers = { get(name: string): string | null | undefined };

const splitList = (value: string | null | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** `X-Query-User` wins over `X-User-Id` (an agent asking on behalf of a user); throws 401 when neither is set. */
export function callerFrom(headers: Headers): Caller {
  const user = (headers.get('x-query-user') ?? '').trim() || (headers.get('x-user-id') ?? '').trim();
  if (!user) {
    throw unauthorized('No caller identity: the request must come through the ingress, which sets X-User-Id.');
  }
  const token = (headers.get('x-user-token') ?? '').trim();
  return {
    user,
    roles: splitList(headers.get('x-user-role')),
    groups: splitList(headers.get('x-user-groups')),
    ...(token ? { token } : {}),
  };
}

/**
 * The caller as headers for a call one service makes to another on the caller's behalf (the runtime asking explore
 * whether a viewer may open a page): the same headers the ingress sets, so the callee decides for the same caller.
 */
export function identityHeaders(caller: Caller): Record<string, string> {
  return {
    'X-User-Id': caller.user,
    'X-User-Role': caller.roles.join(','),
    'X-User-Groups': caller.groups.join(','),
    ...(caller.token ? { 'X-User-Token': caller.token } : {}),
  };
}
