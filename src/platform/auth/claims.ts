import type { Caller } from '../identity.ts';
import { invalidToken } from './errors.ts';

// From a verified token's claims to the caller the services use. Pure functions.

/**
 * The value at a dot path (`realm_access.roles`). A claim whose own name contains dots (Auth0's namespaced
 * `https://svc.example/roles`) is found as it is before the path is split.
 */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A list claim as strings: an array keeps its string members, one string is a list of one, anything else none. */
export function stringList(value: unknown): string[] {
  if (typeof value === 'string') return value.trim() ? [value.trim()] : [];
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
}

export type ClaimPaths = { userClaim: string; rolesClaim: string; groupsClaim: string };

/** Roles the platform does not know are dropped here, before any policy sees them. */
export function callerFromClaims(claims: Record<string, unknown>, token: string, paths: ClaimPaths, knownRoles: readonly string[]): Caller {
  const user = claimAt(claims, paths.userClaim);
  if (typeof user !== 'string' || user.trim() === '') {
    throw invalidToken('no_user_claim', `The access token has no "${paths.userClaim}" claim to name the caller.`);
  }
  const known = new Set(knownRoles);
  const roles = [...new Set(stringList(claimAt(claims, paths.rolesClaim)).filter((r) => known.has(r)))];
  const groups = [...new Set(stringList(claimAt(claims, paths.groupsClaim)))];
  return { user: user.trim(), roles, groups, token };
}
