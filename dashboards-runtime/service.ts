import { createApp } from '../src/platform/http.ts';
import { createMetrics } from '../src/platform/metrics.ts';
import type { ServiceDefinition } from '../src/platform/service.ts';

export const dashboardsRuntimeService: ServiceDefinition = {
  name: 'dashboards-runtime',
  defaultPort: 8090,
  portSetting: 'DASHBOARDS_RUNTIME_PORT',
  migrate: async () => [],
  async start({ shared, logger }) {
    const app = createApp({
      service: 'dashboards-runtime',
      logger,
      metrics: createMetrics('dashboards-runtime'),
      ready: () => shared.db.ping(),
    });
    return { app, close: async () => {} };
  },
};
