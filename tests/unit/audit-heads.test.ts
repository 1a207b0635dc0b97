import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { auditCommand } from '../../src/cli/audit-actions.ts';
import { appendAudit, HEADS_PREFIX, openHeadSigner } from '../../src/platform/audit/index.ts';
import { migratePlatform } from '../../src/platform/db/index.ts';
import { launch, openSharedParts } from '../../src/platform/launcher.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createFolderStore } from '../../src/platform/objects/index.ts';
import { retrievalService } from '../../src/retrieval/service.ts';
import { tamper } from '../support/audit-contract.ts';

// Signed heads end to end, as `svc dev` runs: the services sign the chain's head into the object store with a key
// generated into the data folder, and `svc audit verify` (no anchor given) checks the chain against those heads.
describe('signed audit heads through the services and `svc audit verify`', () => {
  let dataDir: string;
  let env: Record<string, string>;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-audit-heads-'));
    env = { SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'silent', SVC_AUDIT_HEAD_EVERY: '10' };
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  const heads = () => createFolderStore(join(dataDir, 'objects'));
  const signedSeqs = async () => (await heads().list(HEADS_PREFIX)).map((e) => Number(/(\d+)\.json$/.exec(e.key)![1]));
  const verify = async (...args: string[]) => {
    const said: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void said.push(line));
    try {
      return { code: await auditCommand('verify', { anchor: args }, env), out: said.join('\n') };
    } finally {
      log.mockRestore();
    }
  };
  /** 110 records in the data folder's database, signed by the signer a service process runs. */
  const chainOf110 = async () => {
    const shared = await openSharedParts(env, { embedded: true });
    try {
      await migratePlatform(shared.db);
      for (let i = 0; i < 110; i++)
        await appendAudit(shared.db, { service: 'test', action: 'write', actor: 'ada', detail: { question: `q${i}` } });
      const signer = await openHeadSigner(env, { db: shared.db, dataDir, logger: createLogger('audit', 'silent') });
      await signer!.tick();
    } finally {
      await shared.db.close();
    }
  };
  const edit = async (fn: (db: Awaited<ReturnType<typeof openSharedParts>>['db']) => Promise<void>) => {
    const shared = await openSharedParts(env, { embedded: true });
    await fn(shared.db).finally(() => shared.db.close());
  };

  it('a launched service signs a head every N records of its queries, and counts them in /metrics', async () => {
    env.SVC_AUDIT_HEAD_EVERY = '2';
    const shared = await openSharedParts(env, { embedded: true });
    const [retrieval] = await launch([retrievalService], env, shared, { portOverride: 0, hostname: '127.0.0.1' });
    try {
      const call = (method: string, path: string, user: string, role: string, body?: unknown) =>
        fetch(`${retrieval!.url}${path}`, {
          method,
          headers: { 'X-User-Id': user, 'X-User-Role': role, 'Content-Type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      expect((await call('POST', '/collections', 'eve', 'svc-engineer', { slug: 'hb', name: 'Handbook', allowed_roles: [] })).status).toBe(
        201,
      );
      for (const question of ['one?', 'two?', 'three?', 'four?'])
        expect((await call('POST', '/collections/hb/query', 'uma', 'svc-user', { question })).status).toBe(200);
      await vi.waitFor(async () => expect(await signedSeqs()).toEqual([2, 4]), { timeout: 15_000, interval: 200 });
      const metrics = await (await call('GET', '/metrics', 'uma', 'svc-user')).text();
      expect(metrics).toMatch(/svc_audit_heads_total\{outcome="written"[^}]*\} 2/);
    } finally {
      await retrieval?.close();
      await shared.policy.close?.();
      await shared.db.close();
    }
    const passed = await verify();
    expect(passed, passed.out).toMatchObject({ code: 0 });
    expect(passed.out).toContain('signed heads: 2 checked, the newest at seq 4');
  }, 120_000);

  it('an untouched chain verifies and says how far the signed heads reach', async () => {
    await chainOf110();
    await edit((db) =>
      appendAudit(db, { service: 'test', action: 'write', actor: 'ada', detail: { question: 'late' } }).then(() => undefined),
    );
    const passed = await verify();
    expect(passed, passed.out).toMatchObject({ code: 0 });
    expect(passed.out).toContain('audit chain verified: 111 records');
    expect(passed.out).toContain('signed heads: 11 checked, the newest at seq 110; record 111 is only hash-linked');
  }, 120_000);

  it('record 5 rewritten with SQL and records 5 to the end re-hashed: verify fails naming record 5, no anchor given', async () => {
    await chainOf110();
    await edit((db) => tamper.rewrite(db, 5));
    const broken = await verify();
    expect(broken.code).toBe(1);
    expect(broken.out).toContain('audit chain broken at record 5 (rewritten)');
  }, 120_000);

  it('deleting the signed heads while the chain is long fails verification', async () => {
    await chainOf110();
    await heads().delete(HEADS_PREFIX);
    const broken = await verify();
    expect(broken.code).toBe(1);
    expect(broken.out).toContain('audit chain broken at record 1 (unsigned)');
  }, 120_000);
});
