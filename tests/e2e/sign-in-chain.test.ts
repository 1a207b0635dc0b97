import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardsRuntimeService } from '../../dashboards-runtime/src/service.ts';
import { exploreService } from '../../src/explore/service.ts';
import { launch, openSharedParts, type Launched } from '../../src/platform/launcher.ts';
import type { SharedParts } from '../../src/platform/service.ts';
import { retrievalService } from '../../src/retrieval/service.ts';
import { trackerService } from '../../src/tracker/service.ts';
import { launchBrowser, pageFailures } from '../support/browser.ts';
import { passwordToken, signInWithKeycloak, startAuthProxy, startKeycloak, stopAuthProxy, type RealmUser } from '../support/keycloak.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';
import { ensureTrino, trinoToken, TRINO_PORT, TRINO_URL } from '../support/trino.ts';
import { mlflowPython } from '../tracker-client/server.ts';

// The whole sign-in chain with the real parts and the real services in SVC_AUTH_MODE=jwt: a browser goes through
// nginx, is sent to Keycloak, signs in, and each service takes the user from the token oauth2-proxy passes on;
// explore runs the question on Trino with that same token, so Trino's row filter follows the signed-in user; the
// official MLflow client logs with a Keycloak token as MLFLOW_TRACKING_TOKEN.

const BASE = Number(process.env.SVC_IT_CHAIN_PORT ?? 18780);
const entry = (offset: number, path = '/') => `http://127.0.0.1:${BASE + offset}${path}`;
const ORDERS_SQL = 'SELECT count(*) AS orders FROM tpch.tiny.orders';
let issuer: string;
let shared: SharedParts;
let services: Launched[];
let gw: ScriptedGateway;
let browser: Browser;
const url = (name: string) => services.find((s) => s.name === name)!.url;

beforeAll(async () => {
  issuer = startKeycloak();
  const { ca } = ensureTrino();
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-chain-'));
  const caFile = join(process.env.SVC_RUN ?? join(process.env.HOME ?? '', '.cache/svc/run'), `trino-${TRINO_PORT}`, 'keys', 'ca.pem');
  expect(ca).toContain('BEGIN CERTIFICATE');
  gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => `Orders.\n\`\`\`sql\n${ORDERS_SQL}\n\`\`\`` });
  const env = {
    ...process.env,
    SVC_AUTH_MODE: 'jwt',
    SVC_OIDC_ISSUER: issuer,
    SVC_OIDC_AUDIENCE: 'svc',
    // Keycloak's shortest-lived tokens (5 s) must be expired soon after, for the MLflow client's 401
    SVC_OIDC_CLOCK_SKEW_SECONDS: '1',
    SVC_DATA_DIR: dataDir,
    SVC_PG_HOST: '',
    SVC_OPA_URL: '',
    SVC_POLICY_BUNDLE: '',
    SVC_LLM_URL: gw.url,
    SVC_LLM_MODEL: 'svc-chat',
    SVC_TRINO_URL: TRINO_URL,
    SVC_TRINO_CA_FILE: caFile,
    SVC_TRINO_SERVICE_TOKEN: await trinoToken('svc-service'),
    SVC_COST_GATE: 'false',
    SVC_DASHBOARD_HMAC_KEY: 'chain-test-key',
    SVC_RETRIEVAL_PORT: '0',
    SVC_EXPLORE_PORT: '0',
    SVC_TRACKER_PORT: '0',
    SVC_DASHBOARDS_RUNTIME_PORT: '0',
    SVC_LOG_LEVEL: 'warn',
  };
  shared = await openSharedParts(env, { embedded: false, inMemory: true });
  services = await launch([retrievalService, exploreService, trackerService], env, shared, { hostname: '127.0.0.1' });
  const runtime = await launch([dashboardsRuntimeService], { ...env, SVC_EXPLORE_URL: url('explore') }, shared, { hostname: '127.0.0.1' });
  services.push(...runtime);
  const at = (name: string) => new URL(url(name)).host;
  startAuthProxy(BASE, issuer, {
    retrieval: at('retrieval'),
    explore: at('explore'),
    tracker: at('tracker'),
    runtime: at('dashboards-runtime'),
  });
  await promisify(execFile)('bash', ['scripts/install-chromium.sh']);
  browser = await launchBrowser();

  // Collections for two roles, made by an administrator with a token of the realm, straight at the service.
  const admin = await passwordToken(issuer, 'ada');
  for (const [slug, role] of [
    ['analyst-notes', 'svc-analyst'],
    ['engineering', 'svc-engineer'],
  ] as const) {
    const res = await fetch(`${url('retrieval')}/collections`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ slug, name: slug, allowed_roles: [role] }),
    });
    expect(res.status, await res.text()).toBe(201);
  }
}, 900_000);

afterAll(async () => {
  await browser?.close();
  stopAuthProxy(BASE);
  for (const s of services ?? []) await s.close();
  await shared?.db.close();
  await gw?.close();
});

async function signedIn(user: RealmUser, offset: number, path = '/'): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  const failures = pageFailures(page);
  await page.goto(entry(offset, path));
  expect(page.url().startsWith(`${issuer}/protocol/openid-connect/auth`)).toBe(true);
  await signInWithKeycloak(page, issuer, user);
  expect(page.url()).toBe(entry(offset, path));
  page.on('close', () => expect(failures).toEqual([]));
  return page;
}

describe('the retrieval console through nginx, oauth2-proxy and Keycloak', () => {
  it.each([
    ['ana', 'analyst-notes', 'engineering'],
    ['eve', 'engineering', 'analyst-notes'],
  ] as const)('shows %s the collections of their role only', async (user, sees, doesNotSee) => {
    const page = await signedIn(user, 0);
    await page.waitForSelector(`#collections li[data-slug="${sees}"]`);
    expect(await page.locator(`#collections li[data-slug="${doesNotSee}"]`).count()).toBe(0);
    // svc serve has no identity picker: the console's calls carried the session, the service took the user from the token
    expect(await page.locator('#who').count()).toBe(0);
    // the header shows who the ingress says is signed in
    expect(await page.textContent('#signed-in-as')).toContain(`Signed in as ${user}`);
    await page.context().close();
  });
});

describe("the explore console through the chain, on Trino with the signed-in user's token", () => {
  async function ordersSeenBy(user: RealmUser): Promise<number> {
    const page = await signedIn(user, 1);
    await page.fill('#question', 'how many orders are there');
    await page.click('#ask button[type=submit]');
    await expect.poll(() => page.textContent('#count'), { timeout: 60_000 }).toBe('1 rows');
    const value = Number(await page.locator('#results tbody td').first().textContent());
    await page.context().close();
    return value;
  }

  it("applies Trino's row filter for ana, not for abe: same question, different rows", async () => {
    const ana = await ordersSeenBy('ana');
    const abe = await ordersSeenBy('abe');
    expect(abe).toBe(15000);
    expect(ana).toBeGreaterThan(0);
    expect(ana).toBeLessThan(abe);
  }, 180_000);
});

describe('the official MLflow client with a Keycloak token', () => {
  const logRun = async (token: string | undefined) => {
    const script = [
      'import mlflow',
      `mlflow.set_tracking_uri(${JSON.stringify(url('tracker'))})`,
      'with mlflow.start_run() as run:',
      '    mlflow.log_param("alpha", 0.5)',
      'print("RUN", run.info.run_id)',
    ].join('\n');
    const env: NodeJS.ProcessEnv = { ...process.env, USER: 'laptop-user', LOGNAME: 'laptop-user', MLFLOW_HTTP_REQUEST_MAX_RETRIES: '0' };
    delete env.MLFLOW_TRACKING_TOKEN;
    if (token) env.MLFLOW_TRACKING_TOKEN = token;
    try {
      const { stdout } = await promisify(execFile)(await mlflowPython(), ['-c', script], { env, timeout: 300_000 });
      return { ok: true, runId: /RUN (\w+)/.exec(stdout)![1]!, output: stdout };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      return { ok: false, runId: '', output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  };
  const userOf = async (runId: string) => {
    const res = await fetch(`${url('tracker')}/api/2.0/mlflow/runs/get?run_id=${runId}`);
    return ((await res.json()) as { run: { info: { user_id: string } } }).run.info.user_id;
  };

  it('logs a run that records the signed-in user', async () => {
    const run = await logRun(await passwordToken(issuer, 'eve'));
    expect(run.ok, run.output).toBe(true);
    expect(await userOf(run.runId)).toBe('eve');
  }, 600_000);

  it('surfaces the 401 of an expired token', async () => {
    const token = await passwordToken(issuer, 'uma', 'svc-cli-expiring');
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 - Date.now()) + 2500));
    const run = await logRun(token);
    expect(run.ok).toBe(false);
    expect(run.output).toMatch(/401|UNAUTHENTICATED/);
    expect(run.output).toMatch(/expired/);
  }, 600_000);

  it('works with no token at all (a call from inside the cluster)', async () => {
    const run = await logRun(undefined);
    expect(run.ok, run.output).toBe(true);
    expect(await userOf(run.runId)).toBe('laptop-user');
  }, 600_000);
});
