// `svc policies build|impact|explain`: the policy author's commands. Their flags are here; what they run is in
// policies-actions.ts, imported only when one runs (so --help loads neither OPA's wasm nor a database driver).
import { needsSubcommand, type CommandGroup } from './command.ts';
import { UsageError } from './usage-error.ts';

export const policiesCommand: CommandGroup = (program, cli) =>
  program.command('policies', 'build, compare and explain the Rego policies in policies/', (y) =>
    needsSubcommand(
      y
        .command(
          'build',
          'compile policies/ to the committed wasm build (needs opa); with --sign also the signed OPA bundle',
          (z) =>
            z
              .option('sign', { describe: 'PEM private key that signs the bundle', type: 'string', requiresArg: true })
              .option('key-id', { describe: "the key's id in the bundle's signature", type: 'string', default: 'svc', requiresArg: true })
              .option('revision', { describe: "the bundle's revision (default: the git commit)", type: 'string', requiresArg: true })
              .option('out', { describe: 'bundle file (default policies/build/bundle.tar.gz)', type: 'string', requiresArg: true }),
          async (a) => {
            const { build } = await import('./policies-actions.ts');
            cli.exitCode = await build({ sign: a.sign, keyId: a['key-id'], revision: a.revision, out: a.out });
          },
        )
        .command(
          'impact',
          "who gains and who loses what between the base and the working tree's policies",
          (z) =>
            z
              .option('base', { describe: 'a git ref, or a bundle file', type: 'string', default: 'HEAD', requiresArg: true })
              .option('users', { describe: 'JSON list of {"user", "roles", "groups"} to compare', type: 'string', requiresArg: true })
              .option('json', { describe: 'the report as JSON', type: 'boolean', default: false })
              .option('fail-on-gain', { describe: 'exit 1 when anyone gains access (for CI)', type: 'boolean', default: false }),
          async (a) => {
            const { impact } = await import('./policies-actions.ts');
            cli.exitCode = await impact({ base: a.base, users: a.users, json: a.json, failOnGain: a['fail-on-gain'] }, cli.env);
          },
        )
        .command(
          'explain',
          "one decision over the working tree's policies: allow or deny, why, the rules that fired",
          (z) =>
            z
              .option('user', { describe: 'who asks', type: 'string', demandOption: true, requiresArg: true })
              .option('role', { describe: 'their roles, comma-separated', type: 'string', demandOption: true, requiresArg: true })
              .option('groups', { describe: 'their groups, comma-separated (dashboards)', type: 'string', requiresArg: true })
              .option('table', { describe: 'a table: catalog.schema.table', type: 'string', requiresArg: true })
              .option('dashboard', { describe: 'a dashboard id in the configured database', type: 'string', requiresArg: true })
              .option('collection', { describe: 'a collection slug in the configured database', type: 'string', requiresArg: true })
              .conflicts('table', ['dashboard', 'collection'])
              .conflicts('dashboard', 'collection')
              .check((a) => {
                if (a.table === undefined && a.dashboard === undefined && a.collection === undefined)
                  throw new UsageError('name one of --table, --dashboard or --collection');
                return true;
              })
              .example('svc policies explain --user ana --role svc-analyst --table tpch.tiny.customer', ''),
          async (a) => {
            const { explain } = await import('./policies-actions.ts');
            cli.exitCode = await explain(
              { user: a.user, role: a.role, groups: a.groups, table: a.table, dashboard: a.dashboard, collection: a.collection },
              cli.env,
            );
          },
        ),
      'policies',
    ),
  );
