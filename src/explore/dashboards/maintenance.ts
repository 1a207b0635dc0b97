import { rename, rm, readFile, writeFile } from 'node:fs/promises';
import type { Sql } from '../../platform/db/index.ts';
import { signDashboard, verifyDashboard } from '../../platform/dashboard-signature.ts';

/**
 * `svc dashboards resign`: every page that verifies with the current or the previous key is signed again with the
 * current one, so the previous key can be removed. A page that verifies with neither is left alone and reported.
 */
export async function resignDashboards(
  db: Sql,
  keys: { current: string; old?: string | undefined },
): Promise<{ resigned: number; refused: { id: string; reason: string }[] }> {
  const rows = await db.query<{ id: string; file: string }>(`SELECT id, file FROM explore_dashboards WHERE deleted_at IS NULL ORDER BY id`);
  let resigned = 0;
  const refused: { id: string; reason: string }[] = [];
  for (const row of rows) {
    const page = await readFile(row.file, 'utf8').catch(() => undefined);
    if (page === undefined) {
      refused.push({ id: row.id, reason: 'the page file is missing' });
      continue;
    }
    const verified = verifyDashboard(page, keys);
    if (!verified.ok) {
      refused.push({ id: row.id, reason: verified.reason });
      continue;
    }
    if (verified.key === 'current') continue;
    await writeFile(`${row.file}.tmp`, signDashboard(verified.body, keys.current), 'utf8');
    await rename(`${row.file}.tmp`, row.file);
    resigned++;
  }
  return { resigned, refused };
}

/** The periodic cleanup: page files of deleted dashboards are removed, then their rows. */
export async function cleanupDeletedDashboards(db: Sql): Promise<number> {
  const rows = await db.query<{ id: string; file: string }>(`SELECT id, file FROM explore_dashboards WHERE deleted_at IS NOT NULL`);
  for (const row of rows) {
    await rm(row.file, { force: true });
    await db.query(`DELETE FROM explore_dashboards WHERE id = $1`, [row.id]);
  }
  return rows.length;
}
