import type { Sql } from '../platform/db/index.ts';

// The runtime learns which dashboards exist from explore's stored rows (read-only), every poll interval.
export type KnownDashboard = { id: string; owner: string; file: string };

export function createDiscovery(db: Sql, intervalSeconds: number) {
  let known = new Map<string, KnownDashboard>();
  const refresh = async () => {
    const rows = await db.query<KnownDashboard>(`SELECT id, owner, file FROM explore_dashboards WHERE deleted_at IS NULL`);
    known = new Map(rows.map((r) => [r.id, r]));
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    refresh,
    start() {
      timer = setInterval(() => void refresh().catch(() => {}), intervalSeconds * 1000);
      timer.unref();
      return refresh();
    },
    stop: () => clearInterval(timer),
    /** A dashboard seen by the last poll; an unknown id triggers one fresh poll before it is refused. */
    async find(id: string): Promise<KnownDashboard | undefined> {
      if (!known.has(id)) await refresh();
      return known.get(id);
    },
  };
}
export type Discovery = ReturnType<typeof createDiscovery>;
