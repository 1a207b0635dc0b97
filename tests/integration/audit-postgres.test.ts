import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { appendAudit, HEADS_PREFIX } from '../../src/platform/audit/index.ts';
import { openPostgres, type Database } from '../../src/platform/db/index.ts';
import { createFolderStore, createS3Store } from '../../src/platform/objects/index.ts';
import { auditChainContract, tamper } from '../support/audit-contract.ts';
import { freePort } from '../support/free-port.ts';
import { createTestBucket, S3_TEST } from '../support/s3.ts';
import { freshDatabase, openFreshPostgres } from '../support/pg.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';
import { startSvc, type SvcProcess } from '../support/svc-process.ts';

// On the real servers: the chain on Postgres, the signed heads in a MinIO bucket (a fresh prefix per test).
let bucket: { bucket: string; drop: () => Promise<void> } | undefined;
let prefixes = 0;
afterAll(async () => bucket?.drop());
auditChainContract('Postgres', () => openFreshPostgres('audit_contract'), {
  headStore: async () => {
    bucket ??= await createTestBucket('audit-heads');
    return createS3Store({ ...S3_TEST, bucket: bucket.bucket, prefix: `heads-${++prefixes}/` });
  },
});

const run = promisify(execFile);

// Two `svc serve explore` replicas on one Postgres, as a deployment runs them: 20 writers at once through both leave
// a chain `svc audit verify` passes, and it names the exact record after each edit; a user over the question limit
// is refused on both replicas while another user is not, and the model never hears the refused questions.
describe('two explore replicas on one Postgres', () => {
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;
  let db: Database;
  let gw: ScriptedGateway;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  const replicas: { svc: SvcProcess; url: string }[] = [];
  const chats = () => gw.requests.filter((r) => r.path === '/v1/chat/completions').length;

  beforeAll(async () => {
    fresh = await freshDatabase('audit_replicas');
    db = openPostgres(fresh.cfg);
    gw = await startScriptedGateway({
      models: ['svc-chat'],
      chat: () => '```sql\nSELECT n_name FROM tpch.tiny.nation ORDER BY n_name\n```',
    });
    dataDir = await mkdtemp(join(tmpdir(), 'svc-audit-replicas-'));
    env = {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      SVC_LOG_LEVEL: 'warn',
      SVC_PG_HOST: fresh.cfg.host,
      SVC_PG_PORT: String(fresh.cfg.port),
      SVC_PG_DATABASE: fresh.cfg.database,
      SVC_PG_USER: fresh.cfg.user,
      SVC_PG_PASSWORD: fresh.cfg.password ?? '',
      SVC_OPA_URL: '',
      SVC_TRINO_URL: '',
      SVC_LLM_URL: gw.url,
      SVC_LLM_MODEL: 'svc-chat',
      SVC_DASHBOARD_HMAC_KEY: 'replica-key',
      SVC_LIMIT_EXPLORE_QUESTIONS: '3/h',
      SVC_AUDIT_HEAD_EVERY: '10',
    };
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const svc = await startSvc(['serve', 'explore', '--port', String(port)], env, { until: `:${port}`, timeoutMs: 120_000 });
      expect(svc.alive(), svc.output()).toBe(true);
      replicas.push({ svc, url: `http://127.0.0.1:${port}` });
    }
  }, 300_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.svc.stop()));
    await db?.close();
    await gw?.close();
    await fresh?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const call = async (replica: number, method: string, path: string, user: string, body?: unknown) => {
    const res = await fetch(`${replicas[replica]!.url}${path}`, {
      method,
      headers: { 'X-User-Id': user, 'X-User-Role': 'svc-user', 'X-User-Token': `token-of-${user}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };

  // The replicas sign heads with the key they generated into the shared data folder, into its object store.
  const signedSeqs = async () =>
    (await createFolderStore(join(dataDir, 'objects')).list(HEADS_PREFIX)).map((e) => Number(/(\d+)\.json$/.exec(e.key)![1]));
  const signedThrough = (seq: number) =>
    vi.waitFor(async () => expect((await signedSeqs()).at(-1)).toBe(seq), { timeout: 20_000, interval: 250 });

  const verify = async (...args: string[]) => {
    const done = await run(join(process.cwd(), 'bin/svc'), ['audit', 'verify', ...args], { env }).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: `${e.stdout}${e.stderr}` }),
    );
    return done;
  };

  it('20 writers at once through both replicas leave a chain that verifies; verify names each edit', async () => {
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        const user = `writer${w}`;
        const asked = await call(w % 2, 'POST', '/query', user, { question: `list the nations for ${w}` });
        expect(asked.status, JSON.stringify(asked.body)).toBe(200);
        const shared = await call((w + 1) % 2, 'PATCH', `/dashboards/${asked.body.dashboard_id}/share`, user, {
          visibility: 'public',
          allowed_users: [],
          allowed_groups: [],
        });
        expect(shared.status).toBe(200);
        expect((await call(w % 2, 'POST', '/query', user, { question: `list the nations again for ${w}`, persist: false })).status).toBe(
          200,
        );
      }),
    );
    const seqs = (await db.query<{ seq: number }>(`SELECT seq FROM audit_records ORDER BY seq`)).map((r) => r.seq);
    expect(seqs).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    const heads = await Promise.all([0, 1].map(async (r) => (await call(r, 'GET', '/audit/head', 'auditor')).body));
    expect(heads[0]).toEqual(heads[1]);
    expect(heads[0]).toMatchObject({ seq: 60 });

    await signedThrough(60);
    const passed = await verify();
    expect(passed, passed.out).toMatchObject({ code: 0 });
    expect(passed.out).toContain('audit chain verified: 60 records, seq 1 to 60');
    expect(passed.out).toContain('signed heads: 6 checked, the newest at seq 60');
    expect((await verify('--anchor', `60:${heads[0].hash}`)).code).toBe(0);

    // Each edit on a copy of the chain the replicas wrote, restored after.
    const original = await db.query(`SELECT * FROM audit_records ORDER BY seq`);
    const restore = async () => {
      await db.exec(`TRUNCATE audit_records`);
      for (const r of original as any[]) {
        await db.query(
          `INSERT INTO audit_records (seq, at, service, action, actor, detail, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)`,
          [r.seq, r.at, r.service, r.action, r.actor, JSON.stringify(r.detail), r.prev_hash, r.hash],
        );
      }
    };
    const edits: [string, () => Promise<void>, string][] = [
      ['changed', () => tamper.changeField(db, 23), 'audit chain broken at record 23 (changed)'],
      ['removed', () => tamper.deleteRow(db, 31), 'audit chain broken at record 31 (removed)'],
      ['inserted', () => tamper.insertRow(db, 44), 'audit chain broken at record 44 (inserted)'],
      ['reordered', () => tamper.swapPair(db, 8), 'audit chain broken at record 8 (reordered)'],
    ];
    for (const [kind, edit, said] of edits) {
      await edit();
      const broken = await verify();
      expect(broken.code, kind).toBe(1);
      expect(broken.out, kind).toContain(said);
      await restore();
      expect((await verify()).code, `restored after ${kind}`).toBe(0);
    }
  }, 300_000);

  it('a record rewritten with SQL and the chain re-hashed to the end fails verify at that record, with no anchor', async () => {
    // up to 110 records: the replicas sign a head every 10 of them, whoever wrote them
    const [{ seq }] = (await db.query<{ seq: number }>(`SELECT seq FROM audit_head`)) as [{ seq: number }];
    for (let i = seq; i < 110; i++)
      await appendAudit(db, { service: 'test', action: 'write', actor: 'ada', detail: { question: `q${i}` } });
    await signedThrough(110);
    expect((await verify()).code).toBe(0);
    await tamper.rewrite(db, 5);
    const broken = await verify();
    expect(broken.code).toBe(1);
    expect(broken.out).toContain('audit chain broken at record 5 (rewritten)');
  }, 120_000);

  it('refuses a user over the question limit on both replicas, with Retry-After, without calling the model', async () => {
    for (const replica of [0, 1, 0])
      expect(
        (await call(replica, 'POST', '/query', 'spender', { question: `nations ${replica} ${Math.random()}`, persist: false })).status,
      ).toBe(200);
    const before = chats();
    for (const replica of [1, 0]) {
      const refused = await call(replica, 'POST', '/query', 'spender', { question: `one more ${replica}`, persist: false });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(chats()).toBe(before);
    for (const replica of [0, 1])
      expect((await call(replica, 'POST', '/query', 'saver', { question: `nations for saver ${replica}`, persist: false })).status).toBe(
        200,
      );
    // one question bucket for both replicas (the bytes each statement read are a bucket of their own)
    const buckets = await db.query<{ action: string }>(
      `SELECT service || '.' || action AS action FROM limit_buckets WHERE user_id = 'spender' ORDER BY 1`,
    );
    expect(buckets.map((b) => b.action)).toEqual(['explore.question', 'explore.trino_bytes']);
  }, 120_000);
});
