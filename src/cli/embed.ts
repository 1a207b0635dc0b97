// `svc embed`: embed the rows of a Trino table or query into a lake collection, with this process as the import's
// workers (docs/retrieval.md, "Imports"). Several processes (`--shard i/n`, a Kubernetes Job's pods) share one import.
import type { Argv } from 'yargs';
import type { CommandGroup } from './command.ts';
import { withShared } from './database.ts';
import { UsageError } from './usage-error.ts';

type EmbedArgs = {
  collection: string;
  source?: string;
  text?: string;
  key?: string;
  metadata?: string[];
  import?: string;
  workers: number;
  shard: string;
  user?: string;
  roles?: string;
  token?: string;
  progress: boolean;
};

const options = (y: Argv) =>
  y
    .positional('collection', { type: 'string', demandOption: true, describe: 'the lake collection (its slug)' })
    .option('source', { type: 'string', describe: 'a table (catalog.schema.table) or one SELECT statement, read as you on Trino' })
    .option('text', { type: 'string', describe: 'the column (or expression) to embed' })
    .option('key', { type: 'string', describe: 'the column (or expression) that identifies a row: a key is embedded once' })
    .option('metadata', { type: 'array', string: true, describe: 'source columns kept beside each row' })
    .option('import', { type: 'string', describe: 'join an import already created (its id) instead of naming a source' })
    .option('workers', { type: 'number', default: 2, describe: 'parts this process works on at once' })
    .option('shard', { type: 'string', default: '0/1', describe: 'i/n: this process takes the parts whose number is i modulo n' })
    .option('user', { type: 'string', describe: 'who runs it, under SVC_AUTH_MODE=headers (as X-User-Id)' })
    .option('roles', { type: 'string', describe: 'their roles, comma-separated, under SVC_AUTH_MODE=headers' })
    .option('token', { type: 'string', describe: 'your token (default $SVC_TOKEN): who you are under jwt, and how Trino knows you' })
    .option('progress', { type: 'boolean', default: true, describe: 'draw a progress bar on stderr (--no-progress prints a line a part)' });

export const embedCommand: CommandGroup = (program, cli) =>
  program.command(
    'embed <collection>',
    'embed the rows of a Trino table or query into a lake collection (resumable; --shard i/n to share it)',
    options as never,
    (argv: EmbedArgs) => {
      // the command line is checked before the database opens
      const shard = parseShard(argv.shard);
      if (!Number.isInteger(argv.workers) || argv.workers < 1)
        throw new UsageError(`--workers must be a positive integer, got ${argv.workers}`);
      if (!argv.import && !(argv.source && argv.text && argv.key))
        throw new UsageError('name the rows: --source, --text and --key (or --import <id> to join an import)');
      return withShared(cli, async (shared) => {
        const { createLogger } = await import('../platform/log.ts');
        const { openImportDeps, commandCaller } = await import('../retrieval/imports/command.ts');
        const imports = await import('../retrieval/imports/index.ts');
        const { runImportWorkers } = await import('../retrieval/imports/run.ts');
        const { findImport } = await import('../retrieval/imports/store.ts');
        const { drawProgress } = await import('./embed-progress.ts');
        const logger = createLogger('svc', shared.platform.LOG_LEVEL === 'info' ? 'warn' : shared.platform.LOG_LEVEL);
        const deps = await openImportDeps(cli.env, shared, logger);
        const opened = await refusal(async () => {
          const caller = await commandCaller(shared, { user: argv.user, roles: argv.roles, token: argv.token ?? cli.env.SVC_TOKEN });
          const row = argv.import
            ? await imports.joinImport(deps, caller, argv.collection, argv.import)
            : (
                await imports.prepareImport(deps, caller, argv.collection, {
                  source: argv.source!,
                  text: argv.text!,
                  key: argv.key!,
                  metadata: argv.metadata,
                })
              ).row;
          return { caller, row };
        });
        if (!opened) {
          cli.exitCode = 1;
          return;
        }
        const { caller, row } = opened;
        console.log(
          `import ${row.id}: ${row.rows_total} rows of ${row.spec.source} in ${row.split_count} parts; shard ${shard.index}/${shard.count}`,
        );
        const stop = new AbortController();
        const interrupt = () => stop.abort();
        process.once('SIGINT', interrupt);
        process.once('SIGTERM', interrupt);
        const read = async () => imports.viewImport((await findImport(deps.db, argv.collection, row.id))!);
        const progress = drawProgress(read, { bar: argv.progress });
        try {
          await runImportWorkers(imports.workerDeps(deps), caller, row, { workers: argv.workers, shard, signal: stop.signal });
        } finally {
          process.off('SIGINT', interrupt);
          process.off('SIGTERM', interrupt);
          await progress.stop();
        }
        const end = await read();
        console.log(
          `import ${end.import_id}: ${end.status}, ${end.rows_done} of ${end.rows_total} rows, ${end.parts_done} of ${end.parts} parts` +
            (stop.signal.aborted ? ' (stopped here; run the same command again to resume)' : ''),
        );
        if (end.status === 'failed' || end.status === 'cancelled') cli.exitCode = 1;
      });
    },
  );

/** What the service would answer with a 4xx or 5xx is one line here, as the HTTP problem's detail; undefined then. */
async function refusal<T>(run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    const e = err as { name?: string; message?: string; status?: number };
    if (e?.name !== 'ProblemError' && e?.name !== 'TrinoError' && e?.name !== 'AuthError') throw err;
    process.stderr.write(`svc embed: ${e.message}${e.status ? ` (HTTP ${e.status})` : ''}\n`);
    return undefined;
  }
}

function parseShard(value: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(value.trim());
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || index >= count) throw new UsageError(`--shard must be i/n with 0 <= i < n, got '${value}'`);
  return { index, count };
}
