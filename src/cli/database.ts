// `svc db migrate` and `svc tracker db upgrade`: the operator's schema commands, on the configured database.
import type { SharedParts } from '../platform/service.ts';
import { needsSubcommand, type Cli, type CommandGroup } from './command.ts';
import { allServices } from './services.ts';

export const dbCommand: CommandGroup = (program, cli) =>
  program.command('db', 'the database every service shares', (y) =>
    needsSubcommand(
      y.command(
        'migrate',
        "apply every service's schema migrations to the configured database (SVC_PG_HOST, else embedded PGlite)",
        (z) => z,
        () =>
          withShared(cli, async (shared) => {
            const { migrateAll } = await import('../platform/launcher.ts');
            const applied = await migrateAll(shared.db, await allServices(cli));
            console.log(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
          }),
      ),
      'db',
    ),
  );

export const trackerCommand: CommandGroup = (program, cli) =>
  program.command('tracker', "the tracker's maintenance", (y) =>
    needsSubcommand(
      y.command('db', "the tracker's schema", (z) =>
        needsSubcommand(
          z.command(
            'upgrade',
            "bring the tracker's schema up to this version (a server on an older schema is read-only)",
            (w) => w,
            () =>
              withShared(cli, async (shared) => {
                const { upgradeTrackerSchema } = await import('../tracker/schema-gate.ts');
                const applied = await upgradeTrackerSchema(shared.db);
                console.log(applied.length ? `applied ${applied.map((id) => `tracker/${id}`).join(', ')}` : 'tracker schema is up to date');
              }),
          ),
          'tracker db',
        ),
      ),
      'tracker',
    ),
  );

/** Opens the configured database (and policy engine) for one maintenance task, and closes it after. */
export async function withShared(cli: Cli, fn: (shared: SharedParts) => Promise<void>): Promise<void> {
  const { openSharedParts } = await import('../platform/launcher.ts');
  const shared = await openSharedParts(cli.env, { embedded: false });
  try {
    await fn(shared);
  } finally {
    await shared.db.close();
  }
}
