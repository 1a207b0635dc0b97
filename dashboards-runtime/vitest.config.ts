import { defineConfig } from 'vitest/config';

// The runtime's own suite: `npm test -w dashboards-runtime` alone, and a project of the root's `npm test`. Nothing
// here opens a database or starts a service: explore, the page store and the Kubernetes API are stand-ins.
export default defineConfig({
  test: {
    name: 'runtime',
    include: ['tests/**/*.test.ts'],
    env: { SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL ?? 'silent' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
