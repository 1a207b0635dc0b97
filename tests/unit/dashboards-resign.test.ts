import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { exploreService } from '../../src/explore/service.ts';
import { refuseCards, renderCards } from '../../src/platform/dashboard-cards.ts';
import { MAX_PAGE_BYTES, pageDigest, pageKey } from '../../src/platform/dashboard-pages.ts';
import { signDashboard, verifyDashboard } from '../../src/platform/dashboard-signature.ts';
import { openDatabase } from '../../src/platform/db/index.ts';
import { createFolderStore, readObject } from '../../src/platform/objects/index.ts';

// Key rotation end to end through the CLI: pages signed with the old key, `svc dashboards resign` with both keys,
// then every page verifies with the new key alone; a page that verifies with neither is reported, not re-signed. A
// page from before pages moved to the store (a file, signed over its bytes only) is signed with its dashboard's
// identity and moved into the store.
it('re-signs every dashboard with the current key, and moves earlier page files into the store', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-resign-'));
  const pages = createFolderStore(join(dataDir, 'dashboards'));
  const cfg = { PG_PORT: 5432, PG_DATABASE: 'svc', PG_USER: 'svc', DATA_DIR: dataDir };
  const db = await openDatabase(cfg);
  await exploreService.migrate(db);
  const insert = (id: string, page: { object_key?: string; digest?: string; file?: string }) =>
    db.query(
      `INSERT INTO explore_dashboards (id, owner, title, question, sql, columns, object_key, digest, file) VALUES ($1, 'olivia', 't', 'q', 'SELECT 1', '[]'::jsonb, $2, $3, $4)`,
      [id, page.object_key ?? null, page.digest ?? null, page.file ?? null],
    );
  for (const [i, key] of ['old-key', 'old-key', 'new-key', 'stranger-key'].entries()) {
    const id = `d${i}`;
    const page = Buffer.from(signDashboard(`<html>dashboard ${i}</html>\n`, key, { id, owner: 'olivia' }));
    await pages.put(pageKey(id), page);
    await insert(id, { object_key: pageKey(id), digest: pageDigest(page) });
  }
  const legacyFile = join(dataDir, 'legacy.html');
  const legacyBody = '<html>an earlier page</html>\n';
  await writeFile(legacyFile, `# SVC_SIG: ${createHmac('sha256', 'old-key').update(legacyBody).digest('hex')}\n${legacyBody}`);
  await insert('d4', { file: legacyFile });
  await db.close();

  const out = execFileSync('bin/svc', ['dashboards', 'resign'], {
    env: {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      SVC_DASHBOARD_HMAC_KEY: 'new-key',
      SVC_DASHBOARD_HMAC_KEY_OLD: 'old-key',
      SVC_LOG_LEVEL: 'silent',
      SVC_PG_HOST: '',
    },
    encoding: 'utf8',
  });
  expect(out).toContain('re-signed 3 dashboards');
  expect(out).toContain('not re-signed: d3');

  const verdicts = [];
  for (const id of ['d0', 'd1', 'd2', 'd3', 'd4']) {
    const page = (await readObject(pages, pageKey(id), MAX_PAGE_BYTES))!.toString('utf8');
    verdicts.push(verifyDashboard(page, { current: 'new-key' }, { id, owner: 'olivia' }).ok);
  }
  expect(verdicts).toEqual([true, true, true, false, true]);
  expect(existsSync(legacyFile)).toBe(false);
  const again = await openDatabase(cfg);
  const [moved] = await again.query<{ object_key: string; digest: string; file: string | null }>(
    `SELECT object_key, digest, file FROM explore_dashboards WHERE id = 'd4'`,
  );
  expect(moved).toMatchObject({ object_key: 'd4.html', file: null });
  expect(moved!.digest).toBe(pageDigest((await readObject(pages, 'd4.html', MAX_PAGE_BYTES))!));
  await again.close();
}, 60_000);

// A dashboard of cards holds its cards' signatures: the rotation signs each card again, not only the page around them.
it('re-signs the cards of a dashboard of cards, and leaves one whose card verifies with neither key', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-resign-cards-'));
  const pages = createFolderStore(join(dataDir, 'dashboards'));
  const cfg = { PG_PORT: 5432, PG_DATABASE: 'svc', PG_USER: 'svc', DATA_DIR: dataDir };
  const db = await openDatabase(cfg);
  await exploreService.migrate(db);
  const card = (id: string, key: string) => ({
    id,
    owner: 'olivia',
    title: id,
    signed: signDashboard(`<!doctype html><html><body>card ${id}</body></html>\n`, key, { id, owner: 'olivia' }),
  });
  const boards = { b0: [card('c1', 'old-key'), card('c2', 'new-key')], b1: [card('c3', 'old-key'), card('c4', 'stranger-key')] };
  for (const [id, cards] of Object.entries(boards)) {
    const page = Buffer.from(signDashboard(renderCards({ title: id, cards, createdAt: new Date() }), 'new-key', { id, owner: 'olivia' }));
    await pages.put(pageKey(id), page);
    await db.query(
      `INSERT INTO explore_dashboards (id, owner, title, question, sql, columns, object_key, digest, cards) VALUES ($1, 'olivia', $1, '', '', '[]'::jsonb, $2, $3, $4::jsonb)`,
      [id, pageKey(id), pageDigest(page), JSON.stringify(cards.map((c) => c.id))],
    );
  }
  await db.close();
  const out = execFileSync('bin/svc', ['dashboards', 'resign'], {
    env: {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      SVC_DASHBOARD_HMAC_KEY: 'new-key',
      SVC_DASHBOARD_HMAC_KEY_OLD: 'old-key',
      SVC_LOG_LEVEL: 'silent',
      SVC_PG_HOST: '',
    },
    encoding: 'utf8',
  });
  expect(out).toContain('re-signed 1 dashboards');
  expect(out).toContain('not re-signed: b1');
  const bodyOf = async (id: string) => {
    const verified = verifyDashboard(
      (await readObject(pages, pageKey(id), MAX_PAGE_BYTES))!.toString('utf8'),
      { current: 'new-key' },
      { id, owner: 'olivia' },
    );
    expect(verified.ok).toBe(true);
    return verified.ok ? verified.body : '';
  };
  expect(refuseCards(await bodyOf('b0'), { current: 'new-key' }, 'olivia')).toBeUndefined();
  expect(refuseCards(await bodyOf('b1'), { current: 'new-key', old: 'old-key' }, 'olivia')).toMatch(/card 'c4'/);
}, 60_000);
