import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate, migratePlatform, openPglite } from '../../src/platform/db/index.ts';
import { createLogger } from '../../src/platform/log.ts';
import {
  createSchemaGate,
  isReadRequest,
  pendingTrackerMigrations,
  trackerMigrations,
  upgradeTrackerSchema,
} from '../../src/tracker/schema-gate.ts';
import { prepareTrackerSchema } from '../../src/tracker/service.ts';
import { trackerHarness } from '../support/tracker.ts';

const logger = createLogger('tracker', 'silent');

async function olderDatabase() {
  const db = await openPglite({});
  await migratePlatform(db);
  const shipped = await loadMigrations(new URL('../../src/tracker/migrations/', import.meta.url));
  await migrate(db, 'tracker', shipped.slice(0, 1));
  return db;
}

describe('tracker schema gate', () => {
  it('initialises a database without any tracker schema even when migration at start is off', async () => {
    const db = await openPglite({});
    expect(await prepareTrackerSchema(db, { migrateAtStart: false, logger })).toEqual([]);
    await db.close();
  });

  it('leaves an older schema alone when migration at start is off, and upgrades it when on', async () => {
    const db = await olderDatabase();
    const pending = await prepareTrackerSchema(db, { migrateAtStart: false, logger });
    expect(pending.length).toBeGreaterThan(0);
    expect(await prepareTrackerSchema(db, { migrateAtStart: true, logger })).toEqual([]);
    await db.close();
  });

  it('serves reads, refuses writes with PERMISSION_DENIED naming the command, and opens once upgraded', async () => {
    const db = await olderDatabase();
    const shipped = await trackerMigrations();
    const gate = createSchemaGate(db, shipped, await pendingTrackerMigrations(db, shipped));
    const t = await trackerHarness({ db, migrate: false, deps: { schema: gate } });

    expect((await t.get('experiments/get', { experiment_id: '0' })).status).toBe(200);
    expect((await t.post('runs/search', { experiment_ids: ['0'] })).status).toBe(200);
    expect((await t.post('experiments/search', { max_results: 5 })).status).toBe(200);

    for (const [path, body] of [
      ['experiments/create', { name: 'x' }],
      ['runs/create', { experiment_id: '0' }],
      ['runs/log-batch', { run_id: 'r' }],
    ] as const) {
      const res = await t.post(path, body);
      expect(res.status).toBe(403);
      expect(res.body.error_code).toBe('PERMISSION_DENIED');
      expect(res.body.message).toContain("'svc tracker db upgrade'");
    }
    const artifactPut = await t.call('PUT', '/api/2.0/mlflow-artifacts/artifacts/0/x.txt', 'hello');
    expect(artifactPut.status).toBe(403);

    await upgradeTrackerSchema(db);
    expect((await t.post('experiments/create', { name: 'after' })).status).toBe(200);
    await t.close();
  });

  it('serves only the default workspace on a schema without workspaces, naming the upgrade command otherwise', async () => {
    const db = await olderDatabase();
    const shipped = await trackerMigrations();
    const gate = createSchemaGate(db, shipped, await pendingTrackerMigrations(db, shipped));
    const t = await trackerHarness({ db, migrate: false, deps: { schema: gate } });
    const inTeam = await t.app.request('/api/2.0/mlflow/experiments/get?experiment_id=0', { headers: { 'X-MLFLOW-WORKSPACE': 'team-a' } });
    expect(inTeam.status).toBe(403);
    expect(await inTeam.text()).toContain("'svc tracker db upgrade'");
    const listed = await t.get('/api/3.0/mlflow/workspaces');
    expect(listed.status).toBe(403);
    expect(listed.body.message).toContain("'svc tracker db upgrade'");
    await upgradeTrackerSchema(db);
    expect((await t.get('/api/3.0/mlflow/workspaces')).body.workspaces).toEqual([{ name: 'default', description: 'Default workspace' }]);
    await t.close();
  });

  it.each([
    ['GET', '/api/2.0/mlflow/runs/get', true],
    ['POST', '/api/2.0/mlflow/runs/search', true],
    ['POST', '/ajax-api/2.0/mlflow/experiments/search', true],
    ['POST', '/api/2.0/mlflow/logged-models/search', true],
    ['POST', '/api/2.0/mlflow/registered-models/get-latest-versions', true],
    ['POST', '/api/2.0/mlflow/runs/log-batch', false],
    ['PATCH', '/api/2.0/mlflow/logged-models/m-1', false],
    ['DELETE', '/api/2.0/mlflow/logged-models/m-1', false],
    ['PUT', '/api/2.0/mlflow-artifacts/artifacts/0/a.txt', false],
  ])('%s %s is a read: %s', (method, path, read) => {
    expect(isReadRequest(method, path)).toBe(read);
  });
});
