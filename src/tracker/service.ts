import { createApp } from '../platform/http.ts';
import { createMetrics } from '../platform/metrics.ts';
import type { ServiceDefinition } from '../platform/service.ts';

export const trackerService: ServiceDefinition = {
  name: 'tracker',
  defaultPort: 5000,
  portSetting: 'TRACKER_PORT',
  migrate: async () => [],
  async start({ shared, logger }) {
    const app = createApp({ service: 'tracker', logger, metrics: createMetrics('tracker'), ready: () => shared.db.ping() });
    return { app, close: async () => {} };
  },
};
