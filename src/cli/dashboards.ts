// `svc dashboards resign`: after a key rotation, sign every stored dashboard page with the current key.
import { needsSubcommand, type CommandGroup } from './command.ts';
import { withShared } from './database.ts';

export const dashboardsCommand: CommandGroup = (program, cli) =>
  program.command('dashboards', "explore's stored dashboards", (y) =>
    needsSubcommand(
      y.command(
        'resign',
        'sign every dashboard page with the current key (SVC_DASHBOARD_HMAC_KEY), after a rotation',
        (z) => z,
        () =>
          withShared(cli, async (shared) => {
            const { createLogger } = await import('../platform/log.ts');
            const { dashboardKeys } = await import('../platform/dashboard-signature.ts');
            const { openDashboardPages } = await import('../platform/dashboard-pages.ts');
            const { loadExploreConfig } = await import('../explore/config.ts');
            const { resignDashboards } = await import('../explore/dashboards/maintenance.ts');
            const logger = createLogger('svc', shared.platform.LOG_LEVEL);
            const config = loadExploreConfig(cli.env);
            const keys = await dashboardKeys(config, shared.platform.DATA_DIR, logger);
            const pages = openDashboardPages(config, shared.platform.DATA_DIR, cli.env);
            const { resigned, refused } = await resignDashboards(shared.db, pages, keys);
            console.log(`re-signed ${resigned} dashboards with the current key`);
            for (const r of refused) console.log(`not re-signed: ${r.id}: ${r.reason}`);
          }),
      ),
      'dashboards',
    ),
  );
