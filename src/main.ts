#!/usr/bin/env node
// The svc CLI. `svc dev` runs everything on embedded defaults; `svc serve <service>` runs one service on what
// the configuration selects; the other commands are the operator's maintenance tasks.
import { openDashboardPages } from './platform/dashboard-pages.ts';
import { dashboardKeys } from './platform/dashboard-signature.ts';
import { createLogger } from './platform/log.ts';
import { ConfigError } from './platform/config.ts';
import { launch, migrateAll, openSharedParts, StartupError, type Launched } from './platform/launcher.ts';
import type { ServiceDefinition, SharedParts } from './platform/service.ts';
import { lookupTable } from './platform/lookup-table.ts';
import { auditCommand, AUDIT_USAGE } from './audit-command.ts';
import { policiesCommand, POLICIES_USAGE, UsageError } from './policies-command.ts';

// Each service's code is loaded only when a command needs it: `svc serve tracker` does not carry explore's SQL
// parsers or the runtime's Kubernetes client (hundreds of megabytes against the tracker's 512Mi limit).
const SERVICES: Record<string, () => Promise<ServiceDefinition>> = lookupTable({
  retrieval: async () => (await import('./retrieval/service.ts')).retrievalService,
  explore: async () => (await import('./explore/service.ts')).exploreService,
  tracker: async () => (await import('./tracker/service.ts')).trackerService,
  'dashboards-runtime': async () => (await import('../dashboards-runtime/src/service.ts')).dashboardsRuntimeService,
});
const allServices = () => Promise.all(Object.values(SERVICES).map((load) => load()));

const USAGE = `usage: svc <command>

  dev                          start every service on embedded defaults (PGlite, wasm policies)
  serve <service> [--port N]   start one service: ${Object.keys(SERVICES).join(', ')}
  db migrate                   apply every service's schema migrations to the configured database
  tracker db upgrade           bring the tracker's schema up to this version (a server on an older one is read-only)
  dashboards resign            sign every dashboard page with the current key (after a rotation)
${POLICIES_USAGE}${AUDIT_USAGE}`;

async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  switch (command) {
    case 'dev': {
      // The runtime asks explore about every launch: in one process, that is explore on whatever port it was given.
      process.env.SVC_EXPLORE_URL ||= `http://127.0.0.1:${process.env.SVC_EXPLORE_PORT || 8081}`;
      const shared = await openSharedParts(process.env, { embedded: true });
      // The embedded defaults trust identity headers from anyone who can connect: only this machine, unless told
      // and on a terminal its logs are for a person (pino-pretty); piped, they stay JSON lines
      return runUntilSignal(await allServices(), shared, {
        hostname: shared.platform.HOST ?? '127.0.0.1',
        prettyLogs: process.stdout.isTTY === true,
      });
    }
    case 'serve': {
      const load = sub !== undefined ? SERVICES[sub] : undefined;
      if (!load) return usage(`unknown service '${sub ?? ''}'`);
      const service = await load();
      const port = option(rest, '--port');
      const shared = await openSharedParts(process.env, { embedded: false, database: service.usesDatabase !== false });
      return runUntilSignal([service], shared, {
        hostname: shared.platform.HOST ?? '0.0.0.0',
        ...(port === undefined ? {} : { portOverride: Number(port) }),
      });
    }
    case 'db':
      if (sub !== 'migrate') return usage(`unknown db command '${sub ?? ''}'`);
      return withShared(async (shared) => {
        const applied = await migrateAll(shared.db, await allServices());
        console.log(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
      });
    case 'tracker':
      if (sub !== 'db' || rest[0] !== 'upgrade') return usage(`unknown tracker command '${[sub, ...rest].join(' ')}'`);
      return withShared(async (shared) => {
        const { upgradeTrackerSchema } = await import('./tracker/schema-gate.ts');
        const applied = await upgradeTrackerSchema(shared.db);
        console.log(applied.length ? `applied ${applied.map((id) => `tracker/${id}`).join(', ')}` : 'tracker schema is up to date');
      });
    case 'dashboards':
      if (sub !== 'resign') return usage(`unknown dashboards command '${sub ?? ''}'`);
      return withShared(async (shared) => {
        const logger = createLogger('svc', shared.platform.LOG_LEVEL);
        const { loadExploreConfig } = await import('./explore/config.ts');
        const { resignDashboards } = await import('./explore/dashboards/maintenance.ts');
        const config = loadExploreConfig(process.env);
        const keys = await dashboardKeys(config, shared.platform.DATA_DIR, logger);
        const pages = openDashboardPages(config, shared.platform.DATA_DIR, process.env);
        const { resigned, refused } = await resignDashboards(shared.db, pages, keys);
        console.log(`re-signed ${resigned} dashboards with the current key`);
        for (const r of refused) console.log(`not re-signed: ${r.id}: ${r.reason}`);
      });
    case 'policies':
      return policiesCommand(sub, rest, process.env).catch((err: unknown) =>
        err instanceof UsageError ? usage(err.message) : Promise.reject(err),
      );
    case 'audit':
      return auditCommand(sub, rest, process.env).catch((err: unknown) =>
        err instanceof UsageError ? usage(err.message) : Promise.reject(err),
      );
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(USAGE);
      return 0;
    default:
      return usage(`unknown command '${command}'`);
  }
}

async function runUntilSignal(
  services: ServiceDefinition[],
  shared: SharedParts,
  opts: Parameters<typeof launch>[3] = {},
): Promise<number> {
  let launched: Launched[] = [];
  try {
    launched = await launch(services, process.env, shared, opts);
  } catch (err) {
    await Promise.all(launched.map((l) => l.close()));
    await shared.db.close();
    throw err;
  }
  console.log(launched.map((l) => `${l.name.padEnd(20)} ${l.url}`).join('\n'));
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await Promise.all(launched.map((l) => l.close()));
  await shared.policy.close?.();
  await shared.db.close();
  return 0;
}

async function withShared(fn: (shared: SharedParts) => Promise<void>): Promise<number> {
  const shared = await openSharedParts(process.env, { embedded: false });
  try {
    await fn(shared);
    return 0;
  } finally {
    await shared.db.close();
  }
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function usage(problem: string): number {
  process.stderr.write(`svc: ${problem}\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`svc: ${err instanceof ConfigError || err instanceof StartupError ? err.message : (err?.stack ?? String(err))}\n`);
    process.exit(1);
  },
);
