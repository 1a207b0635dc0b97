import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { ConfigError, int, loadConfig, optionalStr, port, str, type Env } from '@svc/platform/config';
import type { Logger } from '@svc/platform/log';
import { createPodLauncher } from './kubernetes.ts';
import { createProcessLauncher, type SandboxLauncher } from './launcher.ts';

// Which sandbox back end the runtime uses: a child process (the default, and what `svc dev` runs) or a pod per
// (viewer, dashboard) in the runtime's own namespace when SVC_SANDBOX_BACKEND=kubernetes.
export const sandboxShape = {
  SANDBOX_BACKEND: z.enum(['process', 'kubernetes']).default('process'),
  SANDBOX_IDLE_SECONDS: int(300, 1),
  /** Set by the Deployment from the downward API; sandboxes are owned by this pod and run in its namespace. */
  POD_NAME: optionalStr(),
  POD_NAMESPACE: optionalStr(),
  SANDBOX_IMAGE: optionalStr(),
  SANDBOX_SERVICE_ACCOUNT: str('svc-dashboard-sandbox'),
  SANDBOX_CPU_LIMIT: str('500m'),
  SANDBOX_MEMORY_LIMIT: str('192Mi'),
  SANDBOX_START_SECONDS: int(60, 1),
  SANDBOX_PORT: port(8080),
};

const SA_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export async function selectLauncher(env: Env, logger: Logger, kubeConfig?: KubeConfig): Promise<SandboxLauncher> {
  const cfg = loadConfig(sandboxShape, env);
  if (cfg.SANDBOX_BACKEND === 'process') return createProcessLauncher();
  if (!cfg.POD_NAME)
    throw new ConfigError(
      'SVC_SANDBOX_BACKEND=kubernetes needs SVC_POD_NAME (the downward API metadata.name), the owner of every sandbox pod',
    );
  // Loaded only here: the Kubernetes client costs tens of megabytes that the process back end never needs.
  const { CoreV1Api, KubeConfig } = await import('@kubernetes/client-node');
  const kc = kubeConfig ?? inCluster(new KubeConfig());
  const namespace: string = cfg.POD_NAMESPACE ?? (await readFile(SA_NAMESPACE_FILE, 'utf8')).trim();
  const launcher = createPodLauncher({
    core: kc.makeApiClient(CoreV1Api),
    namespace,
    runtimePod: cfg.POD_NAME,
    image: cfg.SANDBOX_IMAGE,
    serviceAccount: cfg.SANDBOX_SERVICE_ACCOUNT,
    limits: { cpu: cfg.SANDBOX_CPU_LIMIT, memory: cfg.SANDBOX_MEMORY_LIMIT },
    idleSeconds: cfg.SANDBOX_IDLE_SECONDS,
    startSeconds: cfg.SANDBOX_START_SECONDS,
    port: cfg.SANDBOX_PORT,
  });
  // Sandboxes of this pod's previous run (a container restart keeps the pod) are nobody's now.
  launcher.sweep().then(
    (n) => n > 0 && logger.info({ deleted: n }, 'deleted sandbox pods left by an earlier run'),
    (err) => logger.warn({ err: String(err) }, 'could not sweep old sandbox pods'),
  );
  logger.info({ namespace, owner: cfg.POD_NAME }, 'dashboard sandboxes run as Kubernetes pods');
  return launcher;
}

function inCluster(kc: KubeConfig): KubeConfig {
  kc.loadFromCluster();
  return kc;
}
