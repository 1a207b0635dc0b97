import { openDashboardPages } from '@svc/platform/dashboard-pages';
import { dashboardKeys } from '@svc/platform/dashboard-signature';
import { createMetrics } from '@svc/platform/metrics';
import type { StatelessService } from '@svc/platform/launch-contract';
import { createRuntimeApp } from './app.ts';
import { loadRuntimeConfig } from './config.ts';
import { createSandboxPool } from './pool.ts';
import { selectLauncher } from './sandbox/select.ts';
import { createSessions } from './viewer.ts';

// The runtime keeps no database and no volume of its own: explore answers every launch question over HTTP and the
// pages come from the object store.
export const dashboardsRuntimeService: StatelessService = {
  name: 'dashboards-runtime',
  defaultPort: 8090,
  portSetting: 'DASHBOARDS_RUNTIME_PORT',
  checkConfig: loadRuntimeConfig,
  usesDatabase: false,
  migrate: async () => [],
  async start({ env, shared, logger }) {
    const config = loadRuntimeConfig(env);
    const keys = await dashboardKeys(config, shared.platform.DATA_DIR, logger);
    const pool = createSandboxPool(await selectLauncher(env, logger), {
      idleSeconds: config.SANDBOX_IDLE_SECONDS,
      max: config.SANDBOX_MAX,
      maxPerUser: config.SANDBOX_MAX_PER_USER,
    });
    const exploreHealth = `${config.EXPLORE_URL.replace(/\/$/, '')}/health`;
    const app = createRuntimeApp({
      pool,
      sessions: createSessions(keys.current),
      keys,
      pages: openDashboardPages(config, shared.platform.DATA_DIR, env),
      exploreUrl: config.EXPLORE_URL,
      fetch,
      logger,
      metrics: createMetrics('dashboards-runtime'),
      // ready when explore, which decides every launch, answers
      ready: async () => (await fetch(exploreHealth, { signal: AbortSignal.timeout(2000) })).ok,
      policy: shared.policy,
      callers: shared.callers,
    });
    return { app, close: () => pool.close() };
  },
};
