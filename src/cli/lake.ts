// `svc lake maintain`: the upkeep of lake collections' Iceberg tables (docs/retrieval.md, "Backends"). Its flags are
// here; what it runs is in lake-actions.ts, imported only when it runs.
import { needsSubcommand, type CommandGroup } from './command.ts';

export const lakeCommand: CommandGroup = (program, cli) =>
  program.command('lake', "retrieval's lake collections (Iceberg tables on Trino)", (y) =>
    needsSubcommand(
      y.command(
        'maintain',
        "compact each lake collection's small files and expire its old snapshots and orphan files, as the service user " +
          '(SVC_TRINO_URL, SVC_TRINO_SERVICE_TOKEN); exit 1 if any collection failed',
        (z) =>
          z
            .option('collection', { describe: "one collection's slug (default: every lake collection)", type: 'string', requiresArg: true })
            .option('retain', {
              describe: 'keep snapshots and orphan files younger than this (a Trino duration: 7d, 12h); at least what the catalog allows',
              type: 'string',
              default: '7d',
              requiresArg: true,
            })
            .option('file-size-threshold', {
              describe: 'rewrite data files smaller than this (a Trino data size: 100MB)',
              type: 'string',
              default: '100MB',
              requiresArg: true,
            })
            .option('timeout', {
              describe: 'the time limit of each statement (a duration: 1h); default SVC_RAG_LAKE_TIMEOUT_MS or 1h, the longer',
              type: 'string',
              requiresArg: true,
            })
            .option('json', { describe: 'the report as JSON', type: 'boolean', default: false }),
        async (a) => {
          const { maintain } = await import('./lake-actions.ts');
          cli.exitCode = await maintain(
            { collection: a.collection, retain: a.retain, fileSizeThreshold: a['file-size-threshold'], timeout: a.timeout, json: a.json },
            cli.env,
          );
        },
      ),
      'lake',
    ),
  );
