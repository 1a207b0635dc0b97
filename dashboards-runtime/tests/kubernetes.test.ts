import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSessions } from '../src/viewer.ts';
import { createRuntimeApp } from '../src/app.ts';
import { createSandboxPool } from '../src/pool.ts';
import { RUNTIME_POD_LABEL, SANDBOX_LABELS } from '../src/sandbox/kubernetes.ts';
import type { SandboxLauncher } from '../src/sandbox/launcher.ts';
import { selectLauncher } from '../src/sandbox/select.ts';
import { freePort } from './support/free-port.ts';
import { signDashboard } from '@svc/platform/dashboard-signature';
import { createLogger } from '@svc/platform/log';
import { createMetrics } from '@svc/platform/metrics';
import { createFolderStore } from '@svc/platform/objects';

// The Kubernetes sandbox back end against a recorded Kubernetes API: a local HTTP server that answers like the API
// server for pods and records every request. A created pod is "run" by starting the exact command and environment of
// its spec here, and is Ready when that process answers its readiness probe, as the kubelet would report it.

type Recorded = { method: string; path: string; query: URLSearchParams; auth: string | undefined; body: any };
type Scenario = { createStatus?: number; endWith?: { reason: string; exitCode: number } };

const NS = 'svc';
const RUNTIME_POD = 'svc-dashboards-runtime-6f7c9d-x2k4q';
const RUNTIME_UID = '3f1e2d4c-0000-4000-8000-000000000001';
const IMAGE = 'registry.example.com/svc:0.1.0';
const PODS = `/api/v1/namespaces/${NS}/pods`;

class FakeApiServer {
  requests: Recorded[] = [];
  pods = new Map<string, { pod: V1Pod; process?: ChildProcess }>();
  scenario: Scenario = {};
  private server: Server = createServer((req, res) => void this.handle(req, res));
  url = '';

  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async close() {
    for (const { process } of this.pods.values()) process?.kill('SIGKILL');
    await new Promise((r) => this.server.close(r));
  }
  calls = (method: string) => this.requests.filter((r) => r.method === method);

  private async handle(req: IncomingMessage, res: ServerResponse) {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const url = new URL(req.url!, 'http://x');
    const body = raw ? JSON.parse(raw) : undefined;
    this.requests.push({ method: req.method!, path: url.pathname, query: url.searchParams, auth: req.headers.authorization, body });
    const send = (status: number, obj: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(obj));
    };
    const name = url.pathname.startsWith(`${PODS}/`) ? decodeURIComponent(url.pathname.slice(PODS.length + 1)) : undefined;

    if (req.method === 'GET' && name === RUNTIME_POD) {
      return send(200, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: RUNTIME_POD, namespace: NS, uid: RUNTIME_UID },
        spec: { imagePullSecrets: [{ name: 'registry-pull' }], containers: [{ name: 'dashboards-runtime', image: IMAGE }] },
      });
    }
    if (req.method === 'POST' && url.pathname === PODS) {
      if (this.scenario.createStatus) {
        return send(this.scenario.createStatus, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: `pods is forbidden: User "system:serviceaccount:svc:svc-dashboards-runtime" cannot create resource "pods"`,
          reason: 'Forbidden',
          code: 403,
        });
      }
      const pod: V1Pod = {
        ...body,
        metadata: { ...body.metadata, namespace: NS, uid: `uid-${this.pods.size + 1}` },
        status: { phase: 'Pending' },
      };
      this.pods.set(pod.metadata!.name!, { pod, ...(this.scenario.endWith ? {} : { process: run(pod) }) });
      return send(201, pod);
    }
    if (req.method === 'GET' && url.pathname === PODS) {
      const wanted = (url.searchParams.get('labelSelector') ?? '')
        .split(',')
        .filter(Boolean)
        .map((kv) => kv.split('='));
      const items = [...this.pods.values()].map((p) => p.pod).filter((p) => wanted.every(([k, v]) => p.metadata?.labels?.[k!] === v));
      return send(200, { apiVersion: 'v1', kind: 'PodList', metadata: {}, items });
    }
    const entry = name ? this.pods.get(name) : undefined;
    if (!entry)
      return send(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: `pods "${name}" not found`,
      });
    if (req.method === 'GET') return send(200, { ...entry.pod, status: await this.statusOf(entry) });
    if (req.method === 'DELETE') {
      entry.process?.kill('SIGKILL');
      this.pods.delete(name!);
      return send(200, entry.pod);
    }
    send(405, {});
  }

  /** What the kubelet would report: Running and Ready once the container answers its readiness probe. */
  private async statusOf(entry: { pod: V1Pod; process?: ChildProcess }): Promise<V1Pod['status']> {
    const end = this.scenario.endWith;
    if (end)
      return {
        phase: 'Failed',
        containerStatuses: [
          {
            name: 'sandbox',
            image: IMAGE,
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: end.exitCode, reason: end.reason } },
          },
        ],
      };
    const probe = entry.pod.spec!.containers[0]!.readinessProbe!.httpGet!;
    const ready = await fetch(`http://127.0.0.1:${probe.port}${probe.path}`).then(
      (r) => r.ok,
      () => false,
    );
    return ready
      ? { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] }
      : { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] };
  }
}

/** Starts the pod's container as its spec says: the same command (on this Node) and only the spec's environment. */
function run(pod: V1Pod): ChildProcess {
  const c = pod.spec!.containers[0]!;
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? '']));
  return spawn(process.execPath, c.command!.slice(1), { env, stdio: 'ignore' });
}

describe('dashboards runtime: the Kubernetes sandbox back end', () => {
  let api: FakeApiServer;
  let page: { page: Buffer; digest: string };
  let sandboxPort: number;

  const kubeConfig = () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'test', server: api.url, skipTLSVerify: true }],
      users: [{ name: 'runtime', token: 'runtime-sa-token' }],
      contexts: [{ name: 'test', cluster: 'test', user: 'runtime', namespace: NS }],
      currentContext: 'test',
    });
    return kc;
  };
  const launcher = (): Promise<SandboxLauncher> =>
    selectLauncher(
      {
        SVC_SANDBOX_BACKEND: 'kubernetes',
        SVC_POD_NAME: RUNTIME_POD,
        SVC_POD_NAMESPACE: NS,
        SVC_SANDBOX_PORT: String(sandboxPort),
        SVC_SANDBOX_IDLE_SECONDS: '300',
      },
      createLogger('test', 'silent'),
      kubeConfig(),
    );
  const created = (): V1Pod => api.calls('POST')[0]!.body;

  beforeEach(async () => {
    api = new FakeApiServer();
    await api.start();
    sandboxPort = await freePort();
    const text = '# SVC_SIG: 00\n<html><body>orders by region</body></html>\n';
    page = { page: Buffer.from(text), digest: createHash('sha256').update(text).digest('hex') };
  });
  afterEach(() => api.close());

  it('creates a locked-down pod for the viewer, hands it the page, serves through it and deletes it on stop', async () => {
    const sandbox = await (await launcher()).launch({ user: 'ana@example.com', dashboardId: 'd1', ...page });

    const res = await fetch(sandbox.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('<html><body>orders by region</body></html>\n');

    // Request shapes: the runtime's own pod is read (owner and image), one pod is created, then polled.
    const post = api.calls('POST');
    expect(post).toHaveLength(1);
    expect(post[0]!.path).toBe(PODS);
    expect(api.requests.every((r) => r.auth === 'Bearer runtime-sa-token')).toBe(true);
    expect(api.calls('GET').some((r) => r.path === `${PODS}/${RUNTIME_POD}`)).toBe(true);
    const pod = created();
    const name = pod.metadata!.name!;
    expect(name).toMatch(/^svc-dashboard-[0-9a-f]{10}-[0-9a-f]{6}$/);
    expect(api.calls('GET').some((r) => r.path === `${PODS}/${name}`)).toBe(true);

    // The labels the NetworkPolicy selects, the owner that takes the pod with it, the viewer in annotations.
    expect(pod.metadata!.labels).toEqual({ ...SANDBOX_LABELS, [RUNTIME_POD_LABEL]: RUNTIME_POD });
    expect(pod.metadata!.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: RUNTIME_POD, uid: RUNTIME_UID }]);
    expect(pod.metadata!.annotations).toMatchObject({
      'svc/user': 'ana@example.com',
      'svc/dashboard-id': 'd1',
      'svc/page-sha256': page.digest,
    });

    const spec = pod.spec!;
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.serviceAccountName).toBe('svc-dashboard-sandbox');
    expect(spec.enableServiceLinks).toBe(false);
    expect(spec.restartPolicy).toBe('Never');
    expect(spec.imagePullSecrets).toEqual([{ name: 'registry-pull' }]);
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } });
    expect(spec.containers).toHaveLength(1);
    const c = spec.containers[0]!;
    expect(c.image).toBe(IMAGE);
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.resources!.limits).toEqual({ cpu: '500m', memory: '192Mi' });
    expect(c.command).toContain('--no-warnings');
    expect(c.command!.some((a) => /^--(experimental-)?permission$/.test(a))).toBe(true);
    // Nothing of the runtime's own configuration or secrets travels into the pod.
    expect((c.env ?? []).map((e) => e.name).sort()).toEqual([
      'SVC_SANDBOX_DIGEST',
      'SVC_SANDBOX_EXIT_AFTER_IDLE_SECONDS',
      'SVC_SANDBOX_PORT',
      'SVC_SANDBOX_UPLOAD_TOKEN',
    ]);
    expect(spec.volumes ?? []).toEqual([]);

    // The page is handed over once, by whoever holds the pod's upload token.
    const token = c.env!.find((e) => e.name === 'SVC_SANDBOX_UPLOAD_TOKEN')!.value!;
    expect((await fetch(`${sandbox.url}/page`, { method: 'PUT', body: 'swapped', headers: { Authorization: 'Bearer nope' } })).status).toBe(
      401,
    );
    expect(
      (await fetch(`${sandbox.url}/page`, { method: 'PUT', body: 'swapped', headers: { Authorization: `Bearer ${token}` } })).status,
    ).toBe(409);

    await sandbox.stop();
    const del = api.calls('DELETE');
    expect(del.map((r) => r.path)).toEqual([`${PODS}/${name}`]);
    expect(del[0]!.query.get('gracePeriodSeconds')).toBe('0');
    expect(api.pods.size).toBe(0);
  });

  it('serves GET /d/{id} from a pod of the viewer, reuses it for the next request, and deletes it when the runtime closes', async () => {
    const signed = signDashboard('<html><body>revenue by nation</body></html>\n', 'test-key', { id: 'd1', owner: 'ana' });
    const pages = createFolderStore(await mkdtemp(join(tmpdir(), 'svc-k8s-')));
    await pages.put('d1.html', Buffer.from(signed));
    const pool = createSandboxPool(await launcher(), { idleSeconds: 300, max: 20, maxPerUser: 3 });
    // explore's launch answer for the owner; every other request goes out for real (to the sandbox pod)
    const launch = {
      allow: true,
      reason: 'owner',
      object_key: 'd1.html',
      digest: createHash('sha256').update(signed).digest('hex'),
      owner: 'ana',
    };
    const app = createRuntimeApp({
      pool,
      pages,
      sessions: createSessions('test-key'),
      keys: { current: 'test-key' },
      exploreUrl: 'http://explore.test',
      fetch: async (url, init) => (String(url) === 'http://explore.test/dashboards/d1/launch' ? Response.json(launch) : fetch(url, init)),
      logger: createLogger('runtime', 'silent'),
      metrics: createMetrics('dashboards-runtime'),
      ready: async () => true,
    });
    const open = () => app.request('/d/d1', { headers: { 'X-User-Id': 'ana', 'X-User-Role': 'svc-analyst' } });

    const first = await open();
    expect(first.status).toBe(200);
    expect(await first.text()).toBe('<html><body>revenue by nation</body></html>\n');
    expect((await open()).status).toBe(200);
    expect(api.calls('POST')).toHaveLength(1);
    expect(created().metadata!.annotations!['svc/page-sha256']).toBe(createHash('sha256').update(signed).digest('hex'));

    await pool.close();
    expect(api.calls('DELETE').map((r) => r.path)).toEqual([`${PODS}/${created().metadata!.name}`]);
  });

  it('gives two viewers of one dashboard two pods', async () => {
    const l = await launcher();
    const a = await l.launch({ user: 'ana', dashboardId: 'd1', ...page });
    await a.stop();
    const b = await l.launch({ user: 'ben', dashboardId: 'd1', ...page });
    await b.stop();
    const [first, second] = api.calls('POST').map((r) => r.body as V1Pod);
    expect(first!.metadata!.name).not.toBe(second!.metadata!.name);
    expect([first, second].map((p) => p!.metadata!.annotations!['svc/user'])).toEqual(['ana', 'ben']);
  });

  it('fails the launch and deletes the pod when it ends before it is ready', async () => {
    api.scenario = { endWith: { reason: 'Error', exitCode: 4 } };
    await expect((await launcher()).launch({ user: 'ana', dashboardId: 'd1', ...page })).rejects.toThrow(/ended \(Failed: Error exit 4\)/);
    expect(api.calls('DELETE').map((r) => r.path)).toEqual([`${PODS}/${created().metadata!.name}`]);
  });

  it('says which Role is missing when the API server refuses to create the pod', async () => {
    api.scenario = { createStatus: 403 };
    await expect((await launcher()).launch({ user: 'ana', dashboardId: 'd1', ...page })).rejects.toThrow(
      /could not create pod .*HTTP 403.*cannot create resource "pods".*svc-dashboards-runtime Role/,
    );
  });

  it('deletes the sandboxes an earlier run of the same runtime pod left, and only those', async () => {
    const leftover = (name: string, owner: string): V1Pod => ({
      metadata: { name, labels: { ...SANDBOX_LABELS, [RUNTIME_POD_LABEL]: owner } },
    });
    for (const [name, owner] of [
      ['old-1', RUNTIME_POD],
      ['old-2', RUNTIME_POD],
      ['other', 'svc-dashboards-runtime-6f7c9d-zzzzz'],
    ] as const) {
      api.pods.set(name, { pod: leftover(name, owner) });
    }
    await launcher();
    await expect.poll(() => api.calls('DELETE').length).toBe(2);
    const list = api.calls('GET').find((r) => r.path === PODS)!;
    expect(list.query.get('labelSelector')).toBe(`app.kubernetes.io/component=dashboard-sandbox,${RUNTIME_POD_LABEL}=${RUNTIME_POD}`);
    expect([...api.pods.keys()]).toEqual(['other']);
  });
});
