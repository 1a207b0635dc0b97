import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { exploreService } from '../../src/explore/service.ts';
import { signDashboard, verifyDashboard } from '../../src/platform/dashboard-signature.ts';
import { openDatabase } from '../../src/platform/db/index.ts';

// Key rotation end to end through the CLI: pages signed with the old key, `svc dashboards resign` with both keys,
// then every page verifies with the new key alone; a page that verifies with neither is reported, not re-signed.
it('re-signs every dashboard with the current key', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-resign-'));
  const cfg = { PG_PORT: 5432, PG_DATABASE: 'svc', PG_USER: 'svc', DATA_DIR: dataDir };
  const db = await openDatabase(cfg);
  await exploreService.migrate(db);
  const files: string[] = [];
  for (const [i, key] of ['old-key', 'old-key', 'new-key', 'stranger-key'].entries()) {
    const file = join(dataDir, `d${i}.html`);
    await writeFile(file, signDashboard(`<html>dashboard ${i}</html>\n`, key));
    await db.query(`INSERT INTO explore_dashboards (id, owner, title, question, sql, columns, file) VALUES ($1, 'olivia', 't', 'q', 'SELECT 1', '[]'::jsonb, $2)`, [`d${i}`, file]);
    files.push(file);
  }
  await db.close();

  const out = execFileSync('bin/svc', ['dashboards', 'resign'], {
    env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_DASHBOARD_HMAC_KEY: 'new-key', SVC_DASHBOARD_HMAC_KEY_OLD: 'old-key', SVC_LOG_LEVEL: 'silent', SVC_PG_HOST: '' },
    encoding: 'utf8',
  });
  expect(out).toContain('re-signed 2 dashboards');
  expect(out).toContain('not re-signed: d3');

  const verdicts = await Promise.all(files.map(async (f) => verifyDashboard(await readFile(f, 'utf8'), { current: 'new-key' }).ok));
  expect(verdicts).toEqual([true, true, true, false]);
}, 60_000);
