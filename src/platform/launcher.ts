import { hostname } from 'node:os';
import { openCallerResolver } from './callers.ts';
import { ConfigError, isPort, loadConfig, loadPlatformConfig, port, portProblem, type Env, type PlatformConfig } from './config.ts';
import { openDatabase, type Database } from './db/index.ts';
import { listen, StartupError, type RunningServer } from './http.ts';
import { createLogger, type Logger } from './log.ts';
import { appendAudit, openHeadSigner } from './audit/index.ts';
import { createPolicyEngine, type BundleActivation } from './policy/index.ts';
import type { ServiceDefinition, SharedParts, StartedService } from './service.ts';
import { initTracing } from './tracing.ts';

export { StartupError };

export type Launched = { name: string; url: string; close(): Promise<void> };

const NETWORK = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'CONNECT_TIMEOUT',
]);

/**
 * The database's own refusal, said in the words operators search logs for: 'database does not exist' or
 * 'could not connect', followed by what Postgres (or the network) said.
 */
export function describeDatabaseError(err: unknown, at: string): Error {
  const e = err as { code?: string; message?: string; errors?: { code?: string; message?: string }[] };
  const code = e?.code ?? e?.errors?.[0]?.code;
  const reason = e?.message || e?.errors?.map((x) => x.message).join('; ') || String(err);
  if (code === '3D000')
    return new StartupError(`database does not exist: ${reason} (at ${at}; create it or set SVC_PG_DATABASE)`, { cause: err });
  if (code && (NETWORK.has(code) || /^(08|28)/.test(code))) {
    return new StartupError(`could not connect to the database at ${at}: ${reason}`, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Opens the parts services share. `embedded` ignores SVC_PG_HOST, SVC_OPA_URL and SVC_TRINO_URL (what `svc dev`
 * promises); `database: false` opens none, for a service that keeps no data (any use of it is an error).
 */
export async function openSharedParts(env: Env, opts: { embedded: boolean; inMemory?: boolean; database?: boolean }): Promise<SharedParts> {
  const platform = loadPlatformConfig(env);
  const selected: PlatformConfig = opts.embedded ? { ...platform, PG_HOST: undefined, OPA_URL: undefined } : platform;
  const at = selected.PG_HOST ? `${selected.PG_HOST}:${selected.PG_PORT}/${selected.PG_DATABASE}` : 'embedded PGlite';
  const db =
    opts.database === false
      ? noDatabase()
      : await openDatabase(selected, { inMemory: opts.inMemory ?? false }).catch((err: unknown) => {
          throw describeDatabaseError(err, at);
        });
  // Which policy decided when is part of the record: each replica chains every bundle it takes into force.
  const replica = `${hostname()}/${process.pid}`;
  const onBundleActivated =
    opts.database === false
      ? undefined
      : (detail: BundleActivation) => appendAudit(db, { service: 'policy', action: 'bundle_activated', actor: replica, detail });
  const policy = await createPolicyEngine(selected, env, { embedded: opts.embedded, onBundleActivated });
  return { platform: selected, db, policy, embedded: opts.embedded, callers: openCallerResolver(env, policy) };
}

export async function migrateAll(db: Database, services: ServiceDefinition[]): Promise<string[]> {
  const applied: string[] = [];
  for (const service of services) applied.push(...(await service.migrate(db)).map((id) => `${service.name}/${id}`));
  return applied;
}

/**
 * Each service's port, from `--port` or its `*_PORT` setting, checked before anything opens: a port out of range is a
 * ConfigError naming the setting (or `--port`), not a failure deep inside Node once the database is open.
 */
export function resolvePorts(services: ServiceDefinition[], env: Env, portOverride?: number): Map<string, number> {
  if (portOverride !== undefined && !isPort(portOverride, { listening: true }))
    throw new ConfigError(`invalid configuration: --port=${portOverride}: ${portProblem({ listening: true })}`);
  const shape = Object.fromEntries(services.map((s) => [s.portSetting, port(s.defaultPort, { listening: true })]));
  const ports = loadConfig(shape, env) as Record<string, number>;
  return new Map(services.map((s) => [s.name, portOverride ?? ports[s.portSetting]!]));
}

/** Every service's port and settings, checked before anything opens; the ports to bind, by service. */
export function checkServices(services: ServiceDefinition[], env: Env, portOverride?: number): Map<string, number> {
  const ports = resolvePorts(services, env, portOverride);
  for (const service of services) service.checkConfig?.(env);
  return ports;
}

/**
 * Starts each service on its own port with the shared parts; returns what to print and how to stop. Every service is
 * built (its configuration read and checked) before the first port is bound, so a bad setting of the last service
 * leaves none listening; whatever fails, what was already started is closed before the error goes up.
 */
export async function launch(
  services: ServiceDefinition[],
  env: Env,
  shared: SharedParts,
  opts: {
    portOverride?: number;
    hostname?: string;
    prettyLogs?: boolean;
    /** The command takes `--port` (svc serve): a port in use says so. */
    portFlag?: boolean;
    /** What checkServices returned when the caller checked before opening the shared parts: not checked again. */
    ports?: Map<string, number>;
  } = {},
): Promise<Launched[]> {
  const ports = opts.ports ?? checkServices(services, env, opts.portOverride);
  if (shared.platform.TRACING_ENABLED) {
    await initTracing(services.length === 1 ? services[0]!.name : 'svc', shared.platform.OTEL_EXPORTER_OTLP_ENDPOINT, {
      experimentId: shared.platform.TRACE_EXPERIMENT,
    });
  }
  await migrateAll(
    shared.db,
    services.filter((s) => s.migrateAtStart !== false),
  );
  // One signer per process, whatever services it hosts: heads follow the records committed by any replica.
  if (!shared.auditHeads && services.some((s) => s.usesDatabase !== false)) {
    const logger = createLogger('audit', shared.platform.LOG_LEVEL, { pretty: opts.prettyLogs ?? false });
    // A bad key setting stops start-up; a key that cannot be made is logged, and verify fails once heads are missing.
    shared.auditHeads = await openHeadSigner(env, { db: shared.db, dataDir: shared.platform.DATA_DIR, logger }).catch((err: unknown) => {
      if (err instanceof ConfigError) throw err;
      logger.error({ err: String(err) }, 'the audit head signer could not start: no head is signed by this process');
      return undefined;
    });
    shared.auditHeads?.start();
  }
  const started: { service: ServiceDefinition; logger: Logger; app: StartedService }[] = [];
  const launched: Launched[] = [];
  const stopAll = async () => {
    await Promise.all(launched.map((l) => l.close()));
    await Promise.all(started.slice(launched.length).map((s) => s.app.close()));
    await shared.auditHeads?.stop();
  };
  try {
    for (const service of services) {
      const logger = createLogger(service.name, shared.platform.LOG_LEVEL, { pretty: opts.prettyLogs ?? false });
      started.push({ service, logger, app: await service.start({ env, shared, logger }) });
    }
    for (const { service, logger, app } of started) {
      const change = opts.portOverride !== undefined ? '--port' : `SVC_${service.portSetting}${opts.portFlag ? ' (or --port)' : ''}`;
      const server = await listen(app.app, ports.get(service.name)!, opts.hostname, change);
      logger.info({ url: server.url }, `${service.name} listening`);
      launched.push({
        name: service.name,
        url: server.url,
        close: async () => {
          await server.close();
          await shared.auditHeads?.stop(); // before the database closes under it
          await app.close();
        },
      });
    }
  } catch (err) {
    await stopAll().catch(() => {});
    throw err;
  }
  return launched;
}

/** The database of a service that keeps none: closing it is fine, anything else is a programming error. */
function noDatabase(): Database {
  const refuse = () => Promise.reject(new Error('this service opens no database'));
  return new Proxy({} as Database, {
    get: (_, name) => (name === 'close' ? async () => {} : name === 'then' ? undefined : refuse),
  });
}
