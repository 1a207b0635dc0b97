import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { PEOPLE, type RealmUser } from './identities.ts';

// The identity chain's real servers for tests: Keycloak with the realm of scripts/keycloak/svc-realm.json, and
// oauth2-proxy behind nginx (scripts/start-auth-proxy.sh). docs/auth.md lists the same users.

/** The realm's users (tests/support/identities.ts): one of every platform role, with their passwords and groups. */
const realmUser = (name: RealmUser) => {
  const { password, role, groups } = PEOPLE[name];
  return { password, role, groups };
};
export const REALM_USERS = {
  ada: realmUser('ada'),
  eve: realmUser('eve'),
  ana: realmUser('ana'),
  abe: realmUser('abe'),
  uma: realmUser('uma'),
  vic: realmUser('vic'),
} satisfies Record<RealmUser, { password: string; role: string; groups: readonly string[] }>;
export type { RealmUser };

const script = (name: string) => fileURLToPath(new URL(`../../scripts/${name}`, import.meta.url));
const run = (name: string, args: string[], env: Record<string, string> = {}) =>
  execFileSync('bash', [script(name), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  })
    .trim()
    .split('\n')
    .pop()!;

/** Keycloak on SVC_IT_KEYCLOAK_PORT (18080), started or reused; returns the realm's issuer URL. */
export function startKeycloak(port = process.env.SVC_IT_KEYCLOAK_PORT ?? '18080'): string {
  const issuer = run('start-keycloak.sh', [String(port)]);
  if (!issuer.endsWith('/realms/svc')) throw new Error(`scripts/start-keycloak.sh printed no issuer: ${issuer}`);
  return issuer;
}

export type AuthProxyUpstreams = { retrieval: string; explore: string; tracker: string; runtime: string };

/** nginx + oauth2-proxy on `base`..`base+3` (one port per service) in front of the given upstreams (host:port). */
export function startAuthProxy(base: number, issuer: string, upstreams: AuthProxyUpstreams): string {
  return run('start-auth-proxy.sh', [String(base)], {
    SVC_AUTH_ISSUER: issuer,
    SVC_AUTH_UPSTREAM_RETRIEVAL: upstreams.retrieval,
    SVC_AUTH_UPSTREAM_EXPLORE: upstreams.explore,
    SVC_AUTH_UPSTREAM_TRACKER: upstreams.tracker,
    SVC_AUTH_UPSTREAM_RUNTIME: upstreams.runtime,
  });
}

export function stopAuthProxy(base: number): void {
  run('stop-auth-proxy.sh', [String(base)]);
}

/**
 * An access token for a realm user by the direct grant of the public client `svc-cli` (what the CLI does), or of
 * `svc-cli-expiring`, whose tokens live 5 seconds (for a test that needs an expired token of this realm).
 */
export async function passwordToken(issuer: string, user: RealmUser, client: 'svc-cli' | 'svc-cli-expiring' = 'svc-cli'): Promise<string> {
  const res = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'password',
      client_id: client,
      username: user,
      password: REALM_USERS[user].password,
      scope: 'openid',
    }),
  });
  if (!res.ok) throw new Error(`token for ${user}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Fills Keycloak's login form on a page that is showing it, and waits until the browser has left Keycloak. */
export async function signInWithKeycloak(page: Page, issuer: string, user: RealmUser): Promise<void> {
  await page.waitForSelector('#username');
  await page.fill('#username', user);
  await page.fill('#password', REALM_USERS[user].password);
  await Promise.all([page.waitForURL((url) => !url.href.startsWith(new URL(issuer).origin)), page.click('#kc-login')]);
}
