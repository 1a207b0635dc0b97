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
import { resignCards } from '../../platform/dashboard-cards.ts';
import * as store from '../store.ts';
import { contentKey } from './page-store.ts';

/**
 * `svc dashboards resign`: every page that verifies with the current or the previous key is signed again with the
 * current one, so the previous key can be removed. A page from before pages were signed with their dashboard's id
 * and owner, or kept in a file instead of the store, is verified the old way, signed the new way and moved into
 * the store. A page that verifies with neither key is left alone and reported, and so is a dashboard of cards one
 * of whose cards does.
 */
export async function resignDashboards(
  db: Sql,
  pages: ObjectStore,
  keys: DashboardKeys,
): Promise<{ resigned: number; refused: { id: string; reason: string }[] }> {
  let resigned = 0;
  const refused: { id: string; reason: string }[] = [];
  for (const row of await store.listDashboards(db)) {
    // a page being drawn is signed with the current key when it is stored; one that failed has none
    if (row.page_state !== 'ready') continue;
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
    // a dashboard of cards holds its cards' signatures too: each is signed again with the current key
    const body = resignCards(verified.body, keys, keys.current);
    if (body === undefined) {
      refused.push({ id: row.id, reason: 'a card verifies with neither the current nor the previous key' });
      continue;
    }
    if (verified.key === 'current' && row.object_key && body === verified.body) continue;
    const page = Buffer.from(signDashboard(body, keys.current, identity), 'utf8');
    const object_key = pageKey(row.id);
    await pages.put(object_key, page, { contentType: 'text/html; charset=utf-8', contentLength: page.length });
    await store.updatePage(db, row.id, { object_key, digest: pageDigest(page) });
    if (row.file) await rm(row.file, { force: true });
    if (row.object_key && row.object_key !== object_key) await pages.delete(row.object_key); // a page of a changed chart
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
    await pages.delete(contentKey(row.id));
    if (row.file) await rm(row.file, { force: true });
    await store.purgeDashboard(db, row.id);
  }
  return rows.length;
}
