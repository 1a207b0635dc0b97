import { dashboardKeys } from '../src/platform/dashboard-signature.ts';
import { createMetrics } from '../src/platform/metrics.ts';
import type { ServiceDefinition } from '../src/platform/service.ts';
import { createRuntimeApp } from './app.ts';
import { loadRuntimeConfig } from './config.ts';
import { createDiscovery } from './discovery.ts';
import { createSandboxPool } from './pool.ts';
import { selectLauncher } from './sandbox/select.ts';
import { createSessions } from './viewer.ts';

export const dashboardsRuntimeService: ServiceDefinition = {
  name: 'dashboards-runtime',
  defaultPort: 8090,
  portSetting: 'DASHBOARDS_RUNTIME_PORT',
  migrate: async () => [],
  async start({ env, shared, logger }) {
    const config = loadRuntimeConfig(env);
    const keys = await dashboardKeys(config, shared.platform.DATA_DIR, logger);
    const discovery = createDiscovery(shared.db, config.DISCOVERY_INTERVAL_SECONDS);
    // explore's table may not exist yet when the runtime runs alone; discovery keeps polling
    await discovery.start().catch((err) => logger.warn({ err: String(err) }, 'dashboard discovery failed; retrying'));
    const pool = createSandboxPool(await selectLauncher(env, logger), config.SANDBOX_IDLE_SECONDS);
    const app = createRuntimeApp({
      discovery,
      pool,
      sessions: createSessions(keys.current),
      keys,
      exploreUrl: config.EXPLORE_URL,
      fetch,
      logger,
      metrics: createMetrics('dashboards-runtime'),
      ready: () => shared.db.ping(),
      policy: shared.policy,
    });
    return {
      app,
      close: async () => {
        discovery.stop();
        await pool.close();
      },
    };
  },
};
