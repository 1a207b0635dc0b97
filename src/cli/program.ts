// The svc command line, built on yargs: every command and subcommand answers --help and --version without starting
// anything (yargs prints and exits before a handler runs, and handlers import what they run only when called), unknown
// commands and flags are refused with the nearest valid one, and `svc completion` prints yargs' bash/zsh script.
// Why yargs (docs/cli.md): of citty, commander and yargs it is the one that generates shell completion itself.
import { readFileSync } from 'node:fs';
import yargs, { type Argv } from 'yargs';
import type { Cli, CommandGroup, Services } from './command.ts';
import { auditCommand } from './audit.ts';
import { dashboardsCommand } from './dashboards.ts';
import { dbCommand, trackerCommand } from './database.ts';
import { embedCommand } from './embed.ts';
import { lakeCommand } from './lake.ts';
import { policiesCommand } from './policies.ts';
import { devCommand, serveCommand } from './services.ts';
import { refuseUnknownFlags } from './suggest.ts';
import { UsageError } from './usage-error.ts';

const GROUPS: CommandGroup[] = [
  devCommand,
  serveCommand,
  dbCommand,
  trackerCommand,
  dashboardsCommand,
  policiesCommand,
  auditCommand,
  embedCommand,
  lakeCommand,
];

const LIBRARY_COMPLETION = '__yargs-completion-script';

export const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Runs one command line; resolves to the exit code (0, 1 when the work failed, 2 for a command line it cannot run). */
export async function runCli(args: string[], services: Services, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const cli: Cli = { services, env, exitCode: 0 };
  // `svc` alone and `svc help` are asking for the usage
  const argv = args.length === 0 || args[0] === 'help' ? ['--help', ...args.slice(1)] : args;
  let program = yargs(argv)
    .scriptName('svc')
    .locale('en') // the messages docs/cli.md shows, whatever LANG says
    .usage("usage: svc <command> [options]\n\nRun `svc <command> --help` for a command's options.")
    .version(VERSION)
    .help()
    .alias('help', 'h')
    .strict()
    .recommendCommands()
    .updateStrings({ 'Did you mean %s?': 'unknown command: did you mean %s?' })
    .demandCommand(1, 'name a command')
    // yargs answers the completion script's `--get-yargs-completions` calls; its own completion command would print
    // the script even for `--help`, so it has a name nobody types and `svc completion` (below) asks it for the script
    .completion(LIBRARY_COMPLETION, false)
    .middleware(refuseUnknownFlags(argv) as never, true)
    .fail((message, err) => {
      // yargs' own complaints (validation, a flag without its value) are usage errors; a handler's error goes on as it is
      if (err instanceof UsageError) throw err;
      if (err && err.name !== 'YError') throw err;
      throw new UsageError(message || err?.message || 'cannot run this command line');
    })
    .wrap(Math.min(110, process.stdout.columns || 110))
    .epilogue('Settings come from SVC_<NAME> environment variables: README.md (Configuration) and docs/cli.md.');
  for (const group of GROUPS) program = group(program, cli);
  program = program.command(
    'completion',
    'print a bash or zsh completion script (zsh when $SHELL is zsh): svc completion >> ~/.bashrc',
    (y) => y,
    () => {
      // yargs 18 takes the script's name and command; @types/yargs (written for 17) declares neither
      (program.showCompletionScript as (name: string, command: string) => void)('svc', 'completion');
    },
  );
  await program.parseAsync();
  return cli.exitCode;
}
