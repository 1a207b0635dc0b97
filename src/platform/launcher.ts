import { loadConfig, loadPlatformConfig, int, type Env, type PlatformConfig } from './config.ts';
import { openDatabase, type Database } from './db/index.ts';
import { startServer, type RunningServer } from './http.ts';
import { createLogger } from './log.ts';
import { createPolicyEngine } from './policy/index.ts';
import type { ServiceDefinition, SharedParts } from './service.ts';
import { initTracing } from './tracing.ts';

export type Launched = { name: string; url: string; close(): Promise<void> };

/** Opens the parts services share. `embedded` ignores SVC_PG_HOST, SVC_OPA_URL and SVC_TRINO_URL (what `svc dev` promises). */
export async function openSharedParts(env: Env, opts: { embedded: boolean; inMemory?: boolean }): Promise<SharedParts> {
  const platform = loadPlatformConfig(env);
  const selected: PlatformConfig = opts.embedded ? { ...platform, PG_HOST: undefined, OPA_URL: undefined } : platform;
  const db = await openDatabase(selected, { inMemory: opts.inMemory ?? false });
  const policy = await createPolicyEngine(selected);
  return { platform: selected, db, policy, embedded: opts.embedded };
}

export async function migrateAll(db: Database, services: ServiceDefinition[]): Promise<string[]> {
  const applied: string[] = [];
  for (const service of services) applied.push(...(await service.migrate(db)).map((id) => `${service.name}/${id}`));
  return applied;
}

/** Starts each service on its own port with the shared parts; returns what to print and how to stop. */
export async function launch(
  services: ServiceDefinition[],
  env: Env,
  shared: SharedParts,
  opts: { portOverride?: number; hostname?: string } = {},
): Promise<Launched[]> {
  if (shared.platform.TRACING_ENABLED) {
    await initTracing(services.length === 1 ? services[0]!.name : 'svc', shared.platform.OTEL_EXPORTER_OTLP_ENDPOINT);
  }
  await migrateAll(
    shared.db,
    services.filter((s) => s.migrateAtStart !== false),
  );
  const launched: Launched[] = [];
  for (const service of services) {
    const logger = createLogger(service.name, shared.platform.LOG_LEVEL);
    const port = opts.portOverride ?? loadConfig({ [service.portSetting]: int(service.defaultPort, 0) }, env)[service.portSetting]!;
    const started = await service.start({ env, shared, logger });
    const server: RunningServer = await startServer(started.app, port as number, opts.hostname);
    logger.info({ url: server.url }, `${service.name} listening`);
    launched.push({
      name: service.name,
      url: server.url,
      close: async () => {
        await server.close();
        await started.close();
      },
    });
  }
  return launched;
}
