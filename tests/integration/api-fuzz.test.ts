import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { freePort } from '../support/free-port.ts';
import { PEOPLE, type Person } from '../support/identities.ts';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.ts';
import { fuzz, schemathesis } from '../support/schemathesis.ts';
import { startSvc, type SvcProcess } from '../support/svc-process.ts';

// Schemathesis against every service on embedded defaults (`svc dev`), as an administrator and as a viewer: every
// documented operation, every check (no 5xx, every response as documented, schema-valid requests accepted, invalid
// ones refused, undeclared methods 405). Twice: with the ingress's identity headers, and under SVC_AUTH_MODE=jwt
// with tokens of an identity provider. Afterwards the databases hold nothing half-written and the audit chain verifies.

const SERVICES = ['retrieval', 'explore', 'dashboards-runtime'] as const;
type Service = (typeof SERVICES)[number];
type Mode = 'headers' | 'jwt';
const PORT_SETTINGS: Record<Service, string> = {
  retrieval: 'SVC_RETRIEVAL_PORT',
  explore: 'SVC_EXPLORE_PORT',
  'dashboards-runtime': 'SVC_DASHBOARDS_RUNTIME_PORT',
};
const EXAMPLES = 20;

/** What Schemathesis needs beyond the document: real ids beside the generated ones, and the refusals a schema cannot state. */
function configFor(service: Service, ids: Record<string, string[]>): string {
  const lines = ['# written by tests/integration/api-fuzz.test.ts'];
  for (const [param, values] of Object.entries(ids)) {
    lines.push(`[dictionaries.${param}]`, `values = ${JSON.stringify(values)}`);
  }
  // half the requests name something that exists, so they reach the logic behind the 404
  lines.push('[parameters]');
  for (const param of Object.keys(ids)) lines.push(`"path.${param}" = { dictionary = "${param}", probability = 0.5 }`);
  // Refusals a schema cannot state, each for the operations it concerns: a model is valid while the gateway lists it
  // (GET /models; the spec's 400 'Unknown LLM model') and the offline planner answers only some shapes of question
  // (422); a watch is refused while SVC_WATCH_ROOTS is empty or names no root holding the URI (400); an upload is
  // refused for what its bytes are (an image while OCR is off, a format not read: 400; a file with no text: 422); a
  // query's or an answer's filter is refused when it names a document the collection does not hold, or dates whose
  // order is wrong (400). Explore's: a question or a statement, not both (400: JSON Schema cannot say "exactly one");
  // a chart without the axes its type needs (400), or naming a column the result lacks, or a dashboard of cards naming
  // a page of cards as a card (422).
  const refusable: Record<Service, [string, string[]][]> = {
    explore: [
      ['POST /query', ['400', '422']],
      ['POST /query/csv', ['400', '422']],
      ['POST /dashboards', ['400', '422']],
      ['PUT /dashboards/{id}/chart', ['400', '422']],
      ['POST /saved', ['400']],
    ],
    retrieval: [
      ['POST /collections', ['400']],
      ['PATCH /collections/{slug}', ['400']],
      ['POST /collections/{slug}/documents', ['400', '422']],
      ['POST /collections/{slug}/query', ['400']],
      ['POST /collections/{slug}/answer', ['400']],
    ],
    'dashboards-runtime': [],
  };
  for (const [operation, statuses] of refusable[service]) {
    const expected = ['2xx', '3xx', '401', '403', '404', '409', '429', '5xx', ...statuses];
    lines.push(
      '[[operations]]',
      `include-name = "${operation}"`,
      `checks.positive_data_acceptance.expected-statuses = ${JSON.stringify(expected)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

type Running = {
  mode: Mode;
  dataDir: string;
  process: SvcProcess;
  base: Record<Service, string>;
  as: (p: Person) => Record<string, string>;
};

describe('Schemathesis against every service on embedded defaults', () => {
  let st: string;
  let workDir: string;
  let issuer: TestIssuer;
  const running: Running[] = [];

  async function startDev(mode: Mode): Promise<Running> {
    const dataDir = join(workDir, mode);
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn', SVC_LLM_URL: '', SVC_EMBED_URL: '' };
    const base = {} as Record<Service, string>;
    for (const service of SERVICES) {
      const port = await freePort();
      env[PORT_SETTINGS[service]] = String(port);
      base[service] = `http://127.0.0.1:${port}`;
    }
    env.SVC_TRACKER_PORT = String(await freePort());
    if (mode === 'jwt') Object.assign(env, { SVC_AUTH_MODE: 'jwt', SVC_OIDC_ISSUER: issuer.url, SVC_OIDC_AUDIENCE: 'svc' });
    const process_ = await startSvc(['dev'], env, { until: 'dashboards-runtime', timeoutMs: 180_000 });
    const tokens = new Map<string, string>();
    for (const p of [PEOPLE.ada, PEOPLE.vic]) {
      const claims = { preferred_username: p.user, realm_access: { roles: [p.role] }, groups: [...p.groups] };
      tokens.set(p.user, await issuer.sign({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 }));
    }
    const as = (p: Person): Record<string, string> =>
      mode === 'jwt'
        ? { Authorization: `Bearer ${tokens.get(p.user)}` }
        : { 'X-User-Id': p.user, 'X-User-Role': p.role, ...(p.groups.length ? { 'X-User-Groups': p.groups.join(',') } : {}) };
    return { mode, dataDir, process: process_, base, as };
  }

  /** Something for the ids to name: a collection with a document, and a dashboard every viewer may open. */
  async function seed(r: Running): Promise<Record<Service, Record<string, string[]>>> {
    const admin = r.as(PEOPLE.ada);
    const json = { ...admin, 'Content-Type': 'application/json' };
    const created = await fetch(`${r.base.retrieval}/collections`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ slug: 'handbook', name: 'Handbook', allowed_roles: ['svc-viewer'] }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const form = new FormData();
    form.append('file', new Blob(['Error ERR-4471 means the disk is full. Free some space and retry.']), 'errors.txt');
    const uploaded = await fetch(`${r.base.retrieval}/collections/handbook/documents`, { method: 'POST', headers: admin, body: form });
    expect(uploaded.status, await uploaded.clone().text()).toBe(201);
    const { document_id } = (await uploaded.json()) as { document_id: string };
    const asked = await fetch(`${r.base.explore}/query`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ question: 'how many customers per nation', force: true }),
    });
    expect(asked.status, await asked.clone().text()).toBe(200);
    const { dashboard_id } = (await asked.json()) as { dashboard_id: string };
    const shared = await fetch(`${r.base.explore}/dashboards/${dashboard_id}/share`, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ visibility: 'public' }),
    });
    expect(shared.status, await shared.clone().text()).toBe(200);
    return {
      retrieval: { slug: ['handbook'], document_id: [document_id] },
      explore: { id: [dashboard_id] },
      'dashboards-runtime': { id: [dashboard_id] },
    };
  }

  beforeAll(async () => {
    st = await schemathesis();
    workDir = await mkdtemp(join(tmpdir(), 'svc-fuzz-'));
    issuer = await startTestIssuer();
    running.push(...(await Promise.all([startDev('headers'), startDev('jwt')])));
    for (const r of running) expect(r.process.output(), r.process.output()).toContain('dashboards-runtime');
  }, 400_000);

  afterAll(async () => {
    await Promise.all(running.map((r) => r.process.stop()));
    await issuer?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  for (const mode of ['headers', 'jwt'] as const) {
    it(`finds nothing with ${mode === 'jwt' ? 'bearer tokens (SVC_AUTH_MODE=jwt)' : 'identity headers'}, as an administrator and a viewer`, async () => {
      const r = running.find((x) => x.mode === mode)!;
      const ids = await seed(r);
      const found: string[] = [];
      // The three services at once, each as its two people in turn: Schemathesis waits on the server most of the
      // time, and one run after another took five minutes of CI.
      await Promise.all(
        SERVICES.map(async (service) => {
          for (const person of [PEOPLE.ada, PEOPLE.vic]) {
            const name = `${mode}-${service}-${person.user}`;
            const result = await fuzz(st, {
              url: r.base[service],
              headers: r.as(person),
              config: configFor(service, ids[service]),
              workDir,
              name,
              examples: EXAMPLES,
              // Identity headers are not credentials (the ingress sets them; docs/auth.md): nothing to find invalid.
              // The check runs in jwt mode, where a token is.
              ...(mode === 'headers' ? { excludeChecks: ['ignored_auth'] } : {}),
            });
            console.log(`schemathesis ${name}: ${result.generated} requests generated, ${result.failures.length} failures`);
            if (result.exitCode !== 0 || result.generated === 0)
              found.push(`${name} (exit ${result.exitCode}):\n${result.output.slice(-6000)}`);
          }
        }),
      );
      expect(found, found.join('\n\n')).toEqual([]);
    }, 1_800_000);
  }

  it('leaves nothing half-written: every document whole, every dashboard with its page, the audit chain intact', async () => {
    await Promise.all(running.map((r) => r.process.stop()));
    for (const r of running) {
      const verified = await promisify(execFile)(join(process.cwd(), 'bin/svc'), ['audit', 'verify'], {
        env: { ...process.env, SVC_DATA_DIR: r.dataDir, SVC_PG_HOST: '', SVC_LOG_LEVEL: 'warn' },
      });
      expect(verified.stdout).toMatch(/^audit chain verified: [1-9]\d* records/);
      const db = await openPglite({ dataDir: join(r.dataDir, 'pglite') });
      try {
        const partial = await db.query<{ id: string }>(
          `SELECT d.id FROM retrieval_documents d
            WHERE d.status <> 'INDEXED'
               OR d.chunk_count <> (SELECT count(*) FROM retrieval_chunks c WHERE c.document_id = d.id)`,
        );
        expect(partial, `${r.mode}: documents without all their chunks`).toEqual([]);
        const dashboards = await db.query<{ id: string; object_key: string | null; deleted: boolean }>(
          'SELECT id, object_key, deleted_at IS NOT NULL AS deleted FROM explore_dashboards',
        );
        expect(dashboards.length, `${r.mode}: the seeded dashboard, deleted by the fuzzer or not`).toBeGreaterThan(0);
        const pages = join(r.dataDir, 'dashboards');
        const pageless = dashboards.filter((d) => !d.deleted && (!d.object_key || !existsSync(join(pages, d.object_key))));
        expect(pageless, `${r.mode}: dashboards without their page in ${pages}`).toEqual([]);
      } finally {
        await db.close();
      }
    }
  }, 300_000);
});
