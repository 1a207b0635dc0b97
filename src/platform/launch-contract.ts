import type { Hono } from 'hono';
import type { CallerResolver } from './auth/index.ts';
import type { Env, PlatformConfig } from './config.ts';
import type { AppEnv } from './http.ts';
import type { Logger } from './log.ts';
import type { PolicyEngine } from './policy/index.ts';

// How a launcher starts a service that keeps no data (the dashboards runtime): the parts it is handed hold no
// database, so such a service imports nothing of the database port, even as a type. service.ts widens this for
// the services that keep data; a StatelessService is a ServiceDefinition, so `svc dev` starts it with the others.

/** The parts a stateless service is given: `svc dev` shares them across services, a launcher of its own opens them. */
export type LaunchParts = {
  platform: PlatformConfig;
  /** `svc dev`: every part embedded, whatever the environment names (no Postgres, OPA sidecar or Trino). */
  embedded: boolean;
  policy: PolicyEngine;
  /** Who calls (SVC_AUTH_MODE): the ingress's headers, or a token verified against SVC_OIDC_ISSUER's keys. */
  callers: CallerResolver;
};

export type StartedService = { app: Hono<AppEnv>; close(): Promise<void> };

export type StatelessService = {
  name: string;
  defaultPort: number;
  /** Setting that overrides the port, without the SVC_ prefix. */
  portSetting: string;
  /** `svc serve` opens no database for it, and it migrates nothing. */
  usesDatabase: false;
  /** Reads and checks its own settings with no side effect (ServiceDefinition.checkConfig). */
  checkConfig?(env: Env): unknown;
  migrate(): Promise<string[]>;
  start(ctx: { env: Env; shared: LaunchParts; logger: Logger }): Promise<StartedService>;
};

/**
 * Explore's answer to GET /dashboards/{id}/launch, the one question the runtime asks before it opens a page: where
 * the page is, its digest, and the owner its signature must name. Anything but an explicit allow is a refusal.
 */
export type LaunchDecision =
  | { allow: false; reason: string }
  | { allow: true; reason: string; object_key: string; digest: string; owner: string };
