import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { permissionFlag, type Sandbox, type SandboxLauncher } from './launcher.ts';

// The Kubernetes back end of the sandbox launcher: a fresh pod per (viewer, dashboard), created through the API
// server with the runtime's own service account (a Role on pods in its namespace, k8s/base/dashboards-runtime.yaml).
// The pod runs pod-sandbox.mjs from the runtime's own image, has no token, a read-only root file system and the
// labels that the svc-dashboard-sandbox NetworkPolicy confines to Trino and DNS. It is owned by the runtime's pod, so
// Kubernetes deletes it with that pod; the pool deletes it after it has been idle.

export const SANDBOX_LABELS = {
  'app.kubernetes.io/name': 'svc',
  'app.kubernetes.io/component': 'dashboard-sandbox',
  'app.kubernetes.io/managed-by': 'svc-dashboards-runtime',
} as const;
/** Which runtime pod launched a sandbox: a restarted runtime deletes what its previous run left. */
export const RUNTIME_POD_LABEL = 'svc/runtime-pod';

const SCRIPT = fileURLToPath(new URL('./pod-sandbox.mjs', import.meta.url));
const RUNTIME_CONTAINER = 'dashboards-runtime';

export type PodApi = Pick<CoreV1Api, 'createNamespacedPod' | 'readNamespacedPod' | 'deleteNamespacedPod' | 'listNamespacedPod'>;

export type PodLauncherOptions = {
  core: PodApi;
  namespace: string;
  /** The runtime's own pod (SVC_POD_NAME): owner of every sandbox, source of the image. */
  runtimePod: string;
  /** Overrides the image read from the runtime's pod. */
  image?: string | undefined;
  serviceAccount: string;
  limits: { cpu: string; memory: string };
  idleSeconds: number;
  startSeconds: number;
  /** The sandbox's port; fixed in a cluster, free in tests. */
  port?: number;
  pollMs?: number;
  fetch?: typeof fetch;
};

type Owner = { uid: string; image: string; pullSecrets: { name: string }[] };

/** A label value names at most 63 characters; a longer pod name is replaced by a digest of it. */
export const labelValue = (s: string): string =>
  /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(s) ? s : createHash('sha256').update(s).digest('hex').slice(0, 40);

/** The pod of one sandbox, as sent to the API server. */
export function sandboxPod(input: {
  name: string;
  runtimePod: string;
  owner: Owner;
  serviceAccount: string;
  limits: { cpu: string; memory: string };
  port: number;
  user: string;
  dashboardId: string;
  digest: string;
  uploadToken: string;
  exitAfterIdleSeconds: number;
}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: input.name,
      labels: { ...SANDBOX_LABELS, [RUNTIME_POD_LABEL]: labelValue(input.runtimePod) },
      // Any text may stand in an annotation (a user name with an @, a dashboard id), unlike in a label.
      annotations: { 'svc/user': input.user, 'svc/dashboard-id': input.dashboardId, 'svc/page-sha256': input.digest },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: input.runtimePod, uid: input.owner.uid }],
    },
    spec: {
      serviceAccountName: input.serviceAccount,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 2,
      ...(input.owner.pullSecrets.length ? { imagePullSecrets: input.owner.pullSecrets } : {}),
      securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'sandbox',
          image: input.owner.image,
          command: ['node', permissionFlag(), `--allow-fs-read=${SCRIPT}`, '--no-warnings', SCRIPT],
          env: [
            { name: 'SVC_SANDBOX_DIGEST', value: input.digest },
            { name: 'SVC_SANDBOX_UPLOAD_TOKEN', value: input.uploadToken },
            { name: 'SVC_SANDBOX_PORT', value: String(input.port) },
            { name: 'SVC_SANDBOX_EXIT_AFTER_IDLE_SECONDS', value: String(input.exitAfterIdleSeconds) },
          ],
          ports: [{ name: 'http', containerPort: input.port }],
          readinessProbe: { httpGet: { path: '/healthz', port: input.port }, periodSeconds: 1 },
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: input.limits.cpu, memory: input.limits.memory } },
          securityContext: {
            allowPrivilegeEscalation: false,
            privileged: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            capabilities: { drop: ['ALL'] },
          },
        },
      ],
    },
  };
}

export function createPodLauncher(opts: PodLauncherOptions): SandboxLauncher & { sweep(): Promise<number> } {
  const { core, namespace } = opts;
  const port = opts.port ?? 8080;
  const pollMs = opts.pollMs ?? 250;
  const doFetch = opts.fetch ?? fetch;
  let owner: Promise<Owner> | undefined;
  const ownerOf = () =>
    (owner ??= readOwner(core, namespace, opts.runtimePod, opts.image).catch((err) => ((owner = undefined), Promise.reject(err))));
  const remove = async (name: string) => {
    try {
      await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
    } catch (err) {
      if (statusOf(err) !== 404) throw apiError(`delete pod ${name}`, err);
    }
  };

  return {
    async launch({ user, dashboardId, page, digest }): Promise<Sandbox> {
      const uploadToken = randomBytes(32).toString('hex');
      const name = `svc-dashboard-${createHash('sha256').update(`${user}\u0000${dashboardId}`).digest('hex').slice(0, 10)}-${randomBytes(3).toString('hex')}`;
      const body = sandboxPod({
        name,
        runtimePod: opts.runtimePod,
        owner: await ownerOf(),
        serviceAccount: opts.serviceAccount,
        limits: opts.limits,
        port,
        user,
        dashboardId,
        digest,
        uploadToken,
        exitAfterIdleSeconds: opts.idleSeconds * 2 + 60,
      });
      try {
        await core.createNamespacedPod({ namespace, body });
      } catch (err) {
        throw apiError(`create pod ${name}`, err);
      }
      try {
        const ip = await readyAddress(core, namespace, name, opts.startSeconds * 1000, pollMs);
        const url = `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
        const res = await doFetch(`${url}/page`, {
          method: 'PUT',
          headers: { Authorization: `Bearer ${uploadToken}` },
          body: new Uint8Array(page),
          signal: AbortSignal.timeout(10_000),
        });
        if (res.status !== 204) throw new Error(`the sandbox pod ${name} refused its page (${res.status}: ${(await res.text()).trim()})`);
        return { url, pid: undefined, stop: () => remove(name) };
      } catch (err) {
        await remove(name).catch(() => {});
        throw err;
      }
    },
    /** Deletes the sandboxes an earlier run of this runtime pod left behind (after a container restart). */
    async sweep(): Promise<number> {
      const selector = `app.kubernetes.io/component=${SANDBOX_LABELS['app.kubernetes.io/component']},${RUNTIME_POD_LABEL}=${labelValue(opts.runtimePod)}`;
      let list;
      try {
        list = await core.listNamespacedPod({ namespace, labelSelector: selector });
      } catch (err) {
        throw apiError('list sandbox pods', err);
      }
      const names = list.items.map((p) => p.metadata?.name).filter((n): n is string => !!n);
      await Promise.all(names.map(remove));
      return names.length;
    },
  };
}

async function readOwner(core: PodApi, namespace: string, runtimePod: string, image: string | undefined): Promise<Owner> {
  let pod: V1Pod;
  try {
    pod = await core.readNamespacedPod({ name: runtimePod, namespace });
  } catch (err) {
    throw apiError(`read the runtime's own pod ${runtimePod}`, err);
  }
  const containers = pod.spec?.containers ?? [];
  const own = containers.find((c) => c.name === RUNTIME_CONTAINER) ?? containers[0];
  const uid = pod.metadata?.uid;
  const chosen = image ?? own?.image;
  if (!uid || !chosen) throw new Error(`the runtime's pod ${runtimePod} has no uid or image to give its sandboxes`);
  return { uid, image: chosen, pullSecrets: (pod.spec?.imagePullSecrets ?? []).filter((s): s is { name: string } => !!s.name) };
}

/** Polls the pod until it is ready and has an address; a pod that ends, or is not ready in time, is a failure. */
async function readyAddress(core: PodApi, namespace: string, name: string, timeoutMs: number, pollMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let pod: V1Pod;
    try {
      pod = await core.readNamespacedPod({ name, namespace });
    } catch (err) {
      throw apiError(`read pod ${name}`, err);
    }
    const phase = pod.status?.phase;
    if (phase === 'Failed' || phase === 'Succeeded') {
      const why = pod.status?.containerStatuses?.[0]?.state?.terminated;
      throw new Error(`the sandbox pod ${name} ended (${phase}${why ? `: ${why.reason ?? ''} exit ${why.exitCode}` : ''})`);
    }
    const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (phase === 'Running' && ready && pod.status?.podIP) return pod.status.podIP;
    if (Date.now() > deadline) {
      const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
      throw new Error(
        `the sandbox pod ${name} was not ready within ${timeoutMs / 1000} s (${phase ?? 'no phase'}${waiting ? `: ${waiting.reason ?? ''}` : ''})`,
      );
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

const statusOf = (err: unknown): number | undefined => (err as { code?: unknown })?.code as number | undefined;

/** An API failure said plainly: a 403 names the Role, since a missing permission is the usual cause. */
function apiError(what: string, err: unknown): Error {
  const status = statusOf(err);
  const body = (err as { body?: unknown })?.body;
  const message = typeof body === 'string' ? tryMessage(body) : ((body as { message?: string })?.message ?? (err as Error)?.message);
  const hint =
    status === 403 ? " (the runtime's service account needs the svc-dashboards-runtime Role: pods create, get, list, delete)" : '';
  return new Error(`Kubernetes API: could not ${what}${status ? `: HTTP ${status}` : ''}${message ? `: ${message}` : ''}${hint}`);
}

function tryMessage(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body;
  }
}
