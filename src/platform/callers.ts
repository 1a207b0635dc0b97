import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { authSettings, authShape, createCallerResolver, type CallerResolver } from './auth/index.ts';
import { loadConfig, type Env } from './config.ts';
import { createLogger } from './log.ts';
import { DEFAULT_BUILD_DIR, knownRolesOf, type PolicyEngine } from './policy/index.ts';

// Apart from the launcher, which opens databases: the dashboards runtime's own entry builds its callers with this too.

/**
 * SVC_AUTH_MODE's resolver. In jwt mode the issuer's keys are fetched now; an issuer that cannot be reached is
 * logged and the service starts (each request that needs keys then answers 503 until it can). A token's roles are
 * kept when the policy deciding now knows them, so a bundle that adds a role is honoured as soon as it is in force;
 * an engine that cannot tell (the OPA sidecar) or has no policy loaded yet falls back to the committed build's.
 */
export function openCallerResolver(env: Env, policy: Pick<PolicyEngine, 'knownRoles'>): CallerResolver {
  const settings = authSettings(loadConfig(authShape, env));
  const committed = settings.mode === 'jwt' ? committedKnownRoles() : [];
  const callers = createCallerResolver(settings, { knownRoles: () => policy.knownRoles?.() ?? committed });
  if (settings.mode === 'jwt') {
    void callers.warm().then((ok) => {
      if (!ok)
        createLogger('auth', 'warn').warn(
          { issuer: settings.issuer },
          'the identity provider could not be reached at start-up: requests that need its keys answer 503 until it can',
        );
    });
  }
  return callers;
}

/** The committed build's roles (policies/build/data.json `known_roles`). */
export function committedKnownRoles(): string[] {
  return knownRolesOf(JSON.parse(readFileSync(join(DEFAULT_BUILD_DIR, 'data.json'), 'utf8')));
}
