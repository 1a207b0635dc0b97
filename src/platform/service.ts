import type { Hono } from 'hono';
import type { HeadSigner } from './audit/index.ts';
import type { CallerResolver } from './auth/index.ts';
import type { Env, PlatformConfig } from './config.ts';
import type { Database } from './db/index.ts';
import type { AppEnv } from './http.ts';
import type { Logger } from './log.ts';
import type { PolicyEngine } from './policy/index.ts';

// What the launcher hands every service: parts that `svc dev` opens once and shares across services
// (one embedded database, one policy engine), and that `svc serve` opens for a single service.
export type SharedParts = {
  platform: PlatformConfig;
  /** `svc dev`: every part embedded, whatever the environment names (no Postgres, OPA sidecar or Trino). */
  embedded: boolean;
  db: Database;
  policy: PolicyEngine;
  /** Who calls (SVC_AUTH_MODE): the ingress's headers, or a token verified against SVC_OIDC_ISSUER's keys. */
  callers: CallerResolver;
  /** Signs the audit chain's head into the object store, off the request path; set by launch() when a service keeps data. */
  auditHeads?: HeadSigner;
};

export type ServiceContext = { env: Env; shared: SharedParts; logger: Logger };

export type StartedService = { app: Hono<AppEnv>; close(): Promise<void> };

export type ServiceDefinition = {
  name: string;
  defaultPort: number;
  /** Setting that overrides the port, without the SVC_ prefix. */
  portSetting: string;
  /** Reads and checks this service's own settings (a bad one is a ConfigError naming it), with no side effect: `svc dev`
   *  checks every service's before it opens the database or binds a port. */
  checkConfig?(env: Env): unknown;
  /** Schema migrations this service owns, applied by `svc db migrate` and at start-up. */
  migrate(db: Database): Promise<string[]>;
  /** False: the launcher does not apply `migrate` before start(); the service decides at start (the tracker). */
  migrateAtStart?: boolean;
  /** False: `svc serve` opens no database for this service (the dashboards runtime keeps none). */
  usesDatabase?: boolean;
  start(ctx: ServiceContext): Promise<StartedService>;
};
