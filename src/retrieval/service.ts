import { createApp } from '../platform/http.ts';
import { createMetrics } from '../platform/metrics.ts';
import type { ServiceDefinition } from '../platform/service.ts';

export const retrievalService: ServiceDefinition = {
  name: 'retrieval',
  defaultPort: 8080,
  portSetting: 'RETRIEVAL_PORT',
  migrate: async () => [],
  async start({ shared, logger }) {
    const app = createApp({ service: 'retrieval', logger, metrics: createMetrics('retrieval'), ready: () => shared.db.ping() });
    return { app, close: async () => {} };
  },
};
