import { createApp } from '../platform/http.ts';
import { createMetrics } from '../platform/metrics.ts';
import type { ServiceDefinition } from '../platform/service.ts';

export const exploreService: ServiceDefinition = {
  name: 'explore',
  defaultPort: 8081,
  portSetting: 'EXPLORE_PORT',
  migrate: async () => [],
  async start({ shared, logger }) {
    const app = createApp({ service: 'explore', logger, metrics: createMetrics('explore'), ready: () => shared.db.ping() });
    return { app, close: async () => {} };
  },
};
