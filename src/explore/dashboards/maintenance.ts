import { readFile, rm } from 'node:fs/promises';
import type { Sql } from '../../platform/db/index.ts';
import { MAX_PAGE_BYTES, pageDigest, pageKey } from '../../platform/dashboard-pages.ts';
import {
  signDashboard,
  verifyDashboard,
  verifyLegacyDashboard,
  type DashboardKeys,
  type Verification,
} from '../../platform/dashboard-signature.ts';
import { readObject, type ObjectStore } from '../../platform/objects/index.ts';
import * as store from '../store.ts';

/**
 * `svc dashboards resign`: every page that verifies with the current or the previous key is signed again with the
 * current one, so the previous key can be removed. A page from before pages were signed with their dashboard's id
 * and owner, or kept in a file instead of the store, is verified the old way, signed the new way and moved into
 * the store. A page that verifies with neither key is left alone and reported.
 */
export async function resignDashboards(
  db: Sql,
  pages: ObjectStore,
  keys: DashboardKeys,
): Promise<{ resigned: number; refused: { id: string; reason: string }[] }> {
  let resigned = 0;
  const refused: { id: string; reason: string }[] = [];
  for (const row of await store.listDashboards(db)) {
    const identity = { id: row.id, owner: row.owner };
    const text = await pageOf(pages, row);
    if (text === undefined) {
      refused.push({ id: row.id, reason: 'the page is missing' });
      continue;
    }
    const verified: Verification = row.object_key ? verifyDashboard(text, keys, identity) : verifyLegacyDashboard(text, keys);
    if (!verified.ok) {
      refused.push({ id: row.id, reason: verified.reason });
      continue;
    }
    if (verified.key === 'current' && row.object_key) continue;
    const page = Buffer.from(signDashboard(verified.body, keys.current, identity), 'utf8');
    const object_key = pageKey(row.id);
    await pages.put(object_key, page, { contentType: 'text/html; charset=utf-8', contentLength: page.length });
    await store.updatePage(db, row.id, { object_key, digest: pageDigest(page) });
    if (row.file) await rm(row.file, { force: true });
    resigned++;
  }
  return { resigned, refused };
}

async function pageOf(pages: ObjectStore, row: store.DashboardRow): Promise<string | undefined> {
  if (row.object_key) return (await readObject(pages, row.object_key, MAX_PAGE_BYTES))?.toString('utf8');
  return row.file ? readFile(row.file, 'utf8').catch(() => undefined) : undefined;
}

/** The periodic cleanup: pages of deleted dashboards are removed, then their rows. */
export async function cleanupDeletedDashboards(db: Sql, pages: ObjectStore): Promise<number> {
  const rows = await store.listDeletedDashboards(db);
  for (const row of rows) {
    if (row.object_key) await pages.delete(row.object_key);
    if (row.file) await rm(row.file, { force: true });
    await store.purgeDashboard(db, row.id);
  }
  return rows.length;
}
