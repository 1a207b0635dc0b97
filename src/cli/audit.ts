// `svc audit verify|export|head|prune`: the audit chain's commands. Their flags are here; what they run is in
// audit-actions.ts, imported only when one runs.
import type { Argv } from 'yargs';
import type { AuditAction, AuditOptions } from './audit-actions.ts';
import { needsSubcommand, type Cli, type CommandGroup } from './command.ts';
import { UsageError } from './usage-error.ts';

const from = { describe: 'start at this record number', type: 'string', requiresArg: true } as const;

export const auditCommand: CommandGroup = (program, cli) =>
  program.command('audit', 'verify, export and prune the audit chain (docs/audit.md)', (y) =>
    needsSubcommand(
      y
        .command(
          'verify',
          'walk the audit chain; exit 1 naming the first record changed, removed, inserted, moved or rewritten (checked against the signed heads in SVC_AUDIT_STORE and a retention checkpoint, with SVC_AUDIT_PUBLIC_KEY)',
          (z) =>
            z.option('from', from).option('anchor', {
              describe: 'a head kept elsewhere, SEQ:HASH (repeatable)',
              type: 'string',
              array: true,
              requiresArg: true,
            }),
          (a) => run(cli, 'verify', { from: a.from, anchor: a.anchor }),
        )
        .command(
          'export',
          'the audit records as JSON lines on stdout, for a SIEM',
          (z) => z.option('from', from),
          (a) => run(cli, 'export', { from: a.from }),
        )
        .command(
          'head',
          'the latest seq and hash (as GET /audit/head gives them)',
          (z) => z,
          () => run(cli, 'head', {}),
        )
        .command(
          'prune',
          'remove old records, leaving a checkpoint signed with SVC_AUDIT_SIGNING_KEY',
          (z: Argv) =>
            z
              .option('through', { describe: 'remove records up to this number', type: 'string', requiresArg: true })
              .option('before', { describe: 'remove records older than this date (2026-01-01)', type: 'string', requiresArg: true })
              .conflicts('through', 'before')
              .check((a) => {
                if (a.through === undefined && a.before === undefined) throw new UsageError('name --through SEQ or --before DATE');
                return true;
              }),
          (a) => run(cli, 'prune', { through: a.through as string | undefined, before: a.before as string | undefined }),
        ),
      'audit',
    ),
  );

async function run(cli: Cli, action: AuditAction, opts: AuditOptions): Promise<void> {
  const { auditCommand } = await import('./audit-actions.ts');
  cli.exitCode = await auditCommand(action, opts, cli.env);
}
