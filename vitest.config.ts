import { defineConfig } from 'vitest/config';

// Four suites: unit and runtime (no server, `npm test`; runtime is the dashboards-runtime workspace's own),
// integration (real servers started by scripts/), e2e (headless Chromium).
// CI sets SVC_VITEST_REPORT to collect a JSON report for its closing summary line.
const report = process.env.SVC_VITEST_REPORT;

export default defineConfig({
  test: {
    reporters: report ? ['default', ['json', { outputFile: report }]] : ['default'],
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache): CI runs the unit suite on three Node
    // releases, and the second and third runs need not transform the same files again.
    experimental: { fsModuleCache: true },
    // Three files at once on this two-core machine (vitest's default is cores - 1: one): a unit file spends much of its
    // time waiting on child processes, workers and timers, and three cut the suite from 9.5 to 6 minutes. The
    // integration and e2e projects keep one file at a time (fileParallelism: false): they share the real servers.
    maxWorkers: 3,
    env: { SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL ?? 'silent', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      // The dashboards runtime's workspace keeps its own suite (dashboards-runtime/vitest.config.ts, project 'runtime').
      'dashboards-runtime',
      // Set-up hooks open PGlite and build apps; on a busy two-core machine that can pass ten seconds.
      // One module graph per worker, not per file (isolate: false): importing the services for each of about ninety
      // files was half the suite's CPU. No unit test mocks modules, stubs globals or leaves the environment changed.
      { test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000, isolate: false } },
      {
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
      // A page answers after a real request; on a loaded two-core machine that can take seconds, not poll's 1 s default.
      {
        test: {
          name: 'e2e',
          include: ['tests/e2e/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          expect: { poll: { timeout: 20_000, interval: 100 } },
        },
      },
    ],
  },
});
