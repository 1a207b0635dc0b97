#!/usr/bin/env node
// The svc CLI's entry point (bin/svc, `npm start`, the image's entrypoint). The commands are in src/cli/; this file
// holds the table of services they start and turns what a command ends with into an exit code and one line.
import type { ServiceDefinition } from './platform/service.ts';
import { lookupTable } from './platform/lookup-table.ts';
import { runCli } from './cli/program.ts';

// Each service's code is loaded only when a command needs it: `svc serve tracker` does not carry explore's SQL
// parsers or the runtime's Kubernetes client (hundreds of megabytes against the tracker's 512Mi limit).
const SERVICES: Record<string, () => Promise<ServiceDefinition>> = lookupTable({
  retrieval: async () => (await import('./retrieval/service.ts')).retrievalService,
  explore: async () => (await import('./explore/service.ts')).exploreService,
  tracker: async () => (await import('./tracker/service.ts')).trackerService,
  'dashboards-runtime': async () => (await import('../dashboards-runtime/src/service.ts')).dashboardsRuntimeService,
});

// An error an operator acts on is one line: a command line it cannot run (2), a bad setting or a start-up failure (1).
// Anything else is a bug, and its stack is what a maintainer needs.
const ONE_LINE = new Set(['UsageError', 'ConfigError', 'StartupError']);

runCli(process.argv.slice(2), SERVICES).then(
  (code) => process.exit(code),
  (err: { name?: string; message?: string; stack?: string }) => {
    const usage = err?.name === 'UsageError';
    const said = ONE_LINE.has(err?.name ?? '') ? err.message : (err?.stack ?? String(err));
    process.stderr.write(`svc: ${said}\n${usage ? 'Run `svc --help` (or `svc <command> --help`) for usage.\n' : ''}`);
    process.exit(usage ? 2 : 1);
  },
);
