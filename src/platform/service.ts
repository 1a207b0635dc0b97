import type { HeadSigner } from './audit/index.ts';
import type { Env } from './config.ts';
import type { Database } from './db/index.ts';
import type { LaunchParts, StartedService } from './launch-contract.ts';
import type { Logger } from './log.ts';

// What the launcher hands every service: parts that `svc dev` opens once and shares across services
// (one embedded database, one policy engine), and that `svc serve` opens for a single service. A service that keeps
// no data is written against launch-contract.ts alone.
export type SharedParts = LaunchParts & {
  db: Database;
  /** Signs the audit chain's head into the object store, off the request path; set by launch() when a service keeps data. */
  auditHeads?: HeadSigner;
};

export type ServiceContext = { env: Env; shared: SharedParts; logger: Logger };

export type { StartedService };

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
