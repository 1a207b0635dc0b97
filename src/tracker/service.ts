import { join, resolve } from 'node:path';
import type { Database, Migration } from '../platform/db/index.ts';
import type { Logger } from '../platform/log.ts';
import { createMetrics } from '../platform/metrics.ts';
import { openArtifactRoot } from '../platform/objects/index.ts';
import type { ServiceDefinition } from '../platform/service.ts';
import { createTrackerApp } from './app.ts';
import { loadTrackerConfig, type TrackerConfig } from './config.ts';
import type { TrackerDeps } from './deps.ts';
import { createSchemaGate, pendingTrackerMigrations, trackerMigrations, upgradeTrackerSchema, UPGRADE_COMMAND } from './schema-gate.ts';

/** Builds the tracker's dependencies; the schema gate is passed in (the service decides it at start). */
export function trackerDeps(input: {
  config: TrackerConfig;
  db: Database;
  dataDir: string;
  logger: Logger;
  schema: TrackerDeps['schema'];
  now?: () => number;
}): TrackerDeps {
  const artifactRoot = (input.config.artifactRoot ?? resolve(join(input.dataDir, 'tracker-artifacts'))).replace(/\/+$/, '');
  return {
    config: input.config,
    db: input.db,
    artifacts: openArtifactRoot(artifactRoot, input.config.s3),
    artifactRoot,
    now: input.now ?? Date.now,
    logger: input.logger,
    metrics: createMetrics('tracker'),
    schema: input.schema,
  };
}

/**
 * Brings the schema up at start when allowed, and says what is left. A database without any tracker schema is
 * always initialised; an older one only when TRACKER_MIGRATE_AT_START is on (default: embedded database only).
 */
export async function prepareTrackerSchema(
  db: Database,
  opts: { migrateAtStart: boolean; logger: Logger; shipped?: Migration[] },
): Promise<string[]> {
  const shipped = opts.shipped ?? (await trackerMigrations());
  const pending = await pendingTrackerMigrations(db, shipped);
  const fresh = pending.length === shipped.length;
  if (pending.length > 0 && (fresh || opts.migrateAtStart)) {
    const applied = await upgradeTrackerSchema(db);
    if (applied.length) opts.logger.info({ applied }, 'tracker schema migrated');
    return pendingTrackerMigrations(db, shipped);
  }
  if (pending.length > 0) {
    opts.logger.warn({ pending }, `tracker database schema is older than this server: read-only until '${UPGRADE_COMMAND}' runs`);
  }
  return pending;
}

export const trackerService: ServiceDefinition = {
  name: 'tracker',
  defaultPort: 5000,
  portSetting: 'TRACKER_PORT',
  checkConfig: loadTrackerConfig,
  migrate: upgradeTrackerSchema,
  // The launcher leaves the tracker's schema to start(), which decides between migrating and read-only.
  migrateAtStart: false,
  async start({ env, shared, logger }) {
    const config = loadTrackerConfig(env);
    const migrateAtStart = config.migrateAtStart ?? (shared.embedded || shared.db.kind === 'pglite');
    const shipped = await trackerMigrations();
    const pending = await prepareTrackerSchema(shared.db, { migrateAtStart, logger, shipped });
    const deps = trackerDeps({
      config,
      db: shared.db,
      dataDir: shared.platform.DATA_DIR,
      logger,
      schema: createSchemaGate(shared.db, shipped, pending),
    });
    const platformTraces = shared.platform.TRACE_EXPERIMENT === undefined ? undefined : Number(shared.platform.TRACE_EXPERIMENT);
    return {
      app: createTrackerApp({
        ...deps,
        callers: shared.callers,
        policy: shared.policy,
        ...(platformTraces === undefined ? {} : { platformTraces }),
      }),
      close: async () => {},
    };
  },
};
