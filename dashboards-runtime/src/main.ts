#!/usr/bin/env node
// The runtime's own launcher, what its image runs: no database is opened, because none is loaded. It opens what
// `svc serve dashboards-runtime` would hand the runtime (platform settings, the policy engine for /ready and
// /metrics, who calls), starts it on SVC_DASHBOARDS_RUNTIME_PORT and stops on SIGINT or SIGTERM.
import { openCallerResolver } from '@svc/platform/callers';
import { ConfigError, loadConfig, loadPlatformConfig, port as portSetting } from '@svc/platform/config';
import { listen, StartupError } from '@svc/platform/http';
import { createLogger } from '@svc/platform/log';
import { createPolicyEngine } from '@svc/platform/policy';
import { initTracing } from '@svc/platform/tracing';
import { dashboardsRuntimeService as service } from './service.ts';

async function main(env: NodeJS.ProcessEnv): Promise<number> {
  const platform = loadPlatformConfig(env);
  const port = loadConfig({ [service.portSetting]: portSetting(service.defaultPort, { listening: true }) }, env)[service.portSetting]!;
  if (platform.TRACING_ENABLED) await initTracing(service.name, platform.OTEL_EXPORTER_OTLP_ENDPOINT);
  const policy = await createPolicyEngine(platform, env, { embedded: false });
  const shared = { platform, embedded: false, policy, callers: openCallerResolver(env, policy) };
  const logger = createLogger(service.name, platform.LOG_LEVEL);
  const started = await service.start({ env, shared, logger });
  const server = await listen(started.app, port as number, platform.HOST ?? '0.0.0.0', service.portSetting);
  logger.info({ url: server.url }, `${service.name} listening`);
  console.log(`${service.name.padEnd(20)} ${server.url}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  await started.close();
  await policy.close?.();
  return 0;
}

main(process.env).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // A setting the operator must fix is said in one line; anything else keeps its stack.
    process.stderr.write(
      err instanceof ConfigError || err instanceof StartupError
        ? `dashboards-runtime: ${err.message}\n`
        : `${(err as Error)?.stack ?? String(err)}\n`,
    );
    process.exit(1);
  },
);
