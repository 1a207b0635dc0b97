import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  loadAllYaml,
  type V1ConfigMap,
  type V1Container,
  type V1CronJob,
  type V1Deployment,
  type V1Ingress,
  type V1Job,
  type V1NetworkPolicy,
  type V1NetworkPolicyPeer,
  type V1Role,
  type V1RoleBinding,
  type V1Service,
  type V1ServiceAccount,
} from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_LABELS } from '../../dashboards-runtime/src/sandbox/kubernetes.ts';

// The rendered manifests hold the specifications' numbers: ports, the tracker's probes and resources, the secrets
// by name, the forward-auth ingress, the network policies (the sandbox reaches exactly Trino and DNS), the pod Role.
// Renders each overlay with the kustomize that scripts/install-k8s-tools.sh installs. Without it (a fresh clone) the
// file is skipped with a note; under CI it must be there (.ci/run installs it in the k8s step, before `npm test`).

const kustomize = [join(process.env.SVC_CACHE ?? join(homedir(), '.cache/svc'), 'bin/kustomize')].find(existsSync);
// Parsed into the API's own types (@kubernetes/client-node), which name a peer list `_from` (from is a keyword).
const render = (overlay: string): any[] =>
  loadAllYaml(execFileSync(kustomize!, ['build', join(import.meta.dirname, '../../k8s/overlays', overlay)], { encoding: 'utf8' }));

const SERVICES = [
  { name: 'retrieval', port: 8080, source: 'src/retrieval/service.ts' },
  { name: 'explore', port: 8081, source: 'src/explore/service.ts' },
  { name: 'tracker', port: 5000, source: 'src/tracker/service.ts' },
  { name: 'dashboards-runtime', port: 8090, source: 'dashboards-runtime/src/service.ts' },
] as const;
const SECRETS: Record<string, string[]> = {
  'svc-postgres': ['password'],
  'svc-dashboard-hmac': ['current', 'old'],
  'svc-objstore': ['access-key-id', 'secret-access-key'],
  'svc-gateway': ['embed-api-key', 'llm-api-key'],
  'svc-trino': ['service-token'],
  'svc-audit': ['signing-key'],
  'svc-oauth2-proxy': ['client-secret', 'cookie-secret'],
  'svc-opensearch': ['username', 'password'],
};
const INGRESS_NS = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };

class Rendered {
  constructor(readonly docs: any[]) {}
  all = <T>(kind: string): T[] => this.docs.filter((d) => d.kind === kind);
  one<T>(kind: string, name: string): T {
    const found = this.docs.filter((d) => d.kind === kind && (d.metadata.name === name || d.metadata.name.startsWith(`${name}-`)));
    expect(
      found.map((d) => d.metadata.name),
      `${kind} ${name}`,
    ).toHaveLength(1);
    return found[0];
  }
  deployment = (service: string) => this.one<V1Deployment>('Deployment', `svc-${service}`);
  container = (service: string): V1Container => this.deployment(service).spec!.template.spec!.containers.find((c) => c.name === service)!;
  /** The container's environment as the pod sees it: its ConfigMaps' data, then its own entries. */
  env(service: string): Record<string, string | { secret: string; key: string; optional: boolean }> {
    const c = this.container(service);
    const out: Record<string, any> = {};
    for (const from of c.envFrom ?? [])
      Object.assign(out, this.docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === from.configMapRef!.name)!.data);
    for (const e of c.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      out[e.name] = ref ? { secret: ref.name, key: ref.key, optional: ref.optional ?? false } : (e.value ?? e.valueFrom);
    }
    return out;
  }
  /** The policies whose pod selector picks pods with these labels (an empty selector is the default deny). */
  policyFor = (labels: Record<string, string>): V1NetworkPolicy[] =>
    this.all<V1NetworkPolicy>('NetworkPolicy').filter((p) => {
      const wanted = Object.entries(p.spec?.podSelector?.matchLabels ?? {});
      return wanted.length > 0 && wanted.every(([k, v]) => labels[k] === v);
    });
}

// Under CI the file fails outright rather than skipping (a skipped check would read as a green one).
if (!kustomize && process.env.CI) {
  throw new Error('kustomize is missing: .ci/run installs it with scripts/install-k8s-tools.sh (via scripts/check-k8s.sh) before npm test');
}

if (!kustomize && !process.env.CI) console.warn('k8s-manifests: skipped, kustomize is not installed (bash scripts/install-k8s-tools.sh)');

describe.skipIf(!kustomize).each(['dev', 'prod'])('k8s overlay %s', (overlay) => {
  let r: Rendered;
  beforeAll(() => {
    r = new Rendered(render(overlay));
  });

  it.each(SERVICES)('runs $name on port $port from its image, with a Service on the same port', ({ name, port, source }) => {
    // The port the service listens on by default (its ServiceDefinition) is the one the specification names.
    expect(readFileSync(join(import.meta.dirname, '../..', source), 'utf8')).toMatch(new RegExp(`defaultPort: ${port},`));
    const c = r.container(name);
    if (name === 'dashboards-runtime') {
      // the runtime's own image (the Dockerfile's dashboards-runtime target), whose entrypoint is the runtime
      expect(c.args).toBeUndefined();
      expect(c.image).toBe('registry.example.com/svc-dashboards-runtime:0.1.0');
    } else {
      expect(c.args).toEqual(['serve', name]);
      expect(c.image).toBe('registry.example.com/svc:0.1.0');
    }
    expect(c.ports).toEqual([{ name: 'http', containerPort: port }]);
    const svc = r.one<V1Service>('Service', `svc-${name}`);
    expect(svc.spec!.ports).toEqual([{ name: 'http', port, targetPort: 'http' }]);
    expect(svc.spec!.selector).toEqual(r.deployment(name).spec!.selector.matchLabels);
  });

  it('runs the tracker exactly as its specification says', () => {
    const c = r.container('tracker');
    expect(c.livenessProbe).toMatchObject({ httpGet: { path: '/health', port: 'http' }, initialDelaySeconds: 15, periodSeconds: 30 });
    expect(c.readinessProbe).toMatchObject({ httpGet: { path: '/health', port: 'http' }, initialDelaySeconds: 10, periodSeconds: 10 });
    expect(c.resources).toEqual({
      requests: { cpu: '100m', memory: '256Mi' },
      limits: { cpu: '500m', memory: overlay === 'dev' ? '768Mi' : '512Mi' },
    });
    const env = r.env('tracker');
    expect(env.MLFLOW_TRACKING_URI).toBe('http://svc-tracker:5000');
    expect(env.TRACKER_TRACKING_URI).toBe('http://svc-tracker:5000');
    expect(env.TRACKER_S3_ENDPOINT_URL).toMatch(/^https?:\/\//);
    expect(env.TRACKER_ARTIFACT_ROOT).toMatch(/^s3:\/\/[^/]+\//);
    expect(env.OBJSTORE_ACCESS_KEY_ID).toEqual({ secret: 'svc-objstore', key: 'access-key-id', optional: false });
    expect(env.OBJSTORE_SECRET_ACCESS_KEY).toEqual({ secret: 'svc-objstore', key: 'secret-access-key', optional: false });
    // Notebooks and workers in the cluster get the same address from this ConfigMap.
    expect(r.one<V1ConfigMap>('ConfigMap', 'svc-tracker-client').data).toEqual({
      MLFLOW_TRACKING_URI: 'http://svc-tracker:5000',
      TRACKER_TRACKING_URI: 'http://svc-tracker:5000',
    });
  });

  it('migrates the database in a Job before the services need it', () => {
    const job = r.one<V1Job>('Job', 'svc-migrate');
    const c = job.spec!.template.spec!.containers[0]!;
    expect([...(c.command ?? []), ...(c.args ?? [])].join(' ')).toContain('svc db migrate && svc tracker db upgrade');
    expect(c.image).toBe(r.container('tracker').image);
    expect(r.env('tracker').TRACKER_MIGRATE_AT_START).toBe('false');
  });

  it('takes settings with the specifications defaults from ConfigMaps', () => {
    expect(r.env('retrieval')).toMatchObject({
      SVC_MAX_UPLOAD_BYTES: '52428800',
      SVC_DEFAULT_TOP_K: '5',
      SVC_MAX_TOP_K: '50',
      SVC_CHUNK_SIZE_TOKENS: '400',
      SVC_CHUNK_OVERLAP_TOKENS: '60',
      SVC_EMBED_DIM: '768',
      SVC_EMBED_MODEL: 'svc-embed',
      SVC_PG_PORT: '5432',
      SVC_PG_DATABASE: 'svc',
      SVC_PG_USER: 'svc',
    });
    expect(r.env('explore')).toMatchObject({
      SVC_SQL_AUTO_LIMIT: '10000',
      SVC_COST_BYTES_LIMIT: '1073741824',
      SVC_COST_GATE: 'true',
      SVC_QUERY_CACHE_TTL: '300',
      SVC_QUERY_CACHE_SIZE: '256',
      SVC_SESSION_TTL: '3600',
      SVC_PII_BYPASS_ROLES: 'svc-admin,svc-engineer',
      SVC_PII_REDACTION: '***',
    });
    // semantic_distance's phrase is embedded as retrieval embeds: the same gateway, model and dimension, the same key
    for (const name of ['SVC_EMBED_URL', 'SVC_EMBED_MODEL', 'SVC_EMBED_DIM', 'SVC_EMBED_API_KEY'])
      expect(r.env('explore')[name], name).toEqual(r.env('retrieval')[name]);
    expect(r.env('dashboards-runtime')).toMatchObject({
      SVC_EXPLORE_URL: 'http://svc-explore:8081',
      SVC_SANDBOX_BACKEND: 'kubernetes',
      SVC_SANDBOX_MAX: '20',
      SVC_SANDBOX_MAX_PER_USER: '3',
    });
    // explore writes the pages where the runtime reads them
    expect(r.env('dashboards-runtime').SVC_DASHBOARDS_STORE).toBe(r.env('explore').SVC_DASHBOARDS_STORE);
  });

  it('gives the dashboards runtime no database credentials and no volume but its scratch space', () => {
    const env = r.env('dashboards-runtime');
    expect(env.SVC_PG_PASSWORD).toBeUndefined();
    expect(env.OBJSTORE_ACCESS_KEY_ID).toEqual({ secret: 'svc-objstore', key: 'access-key-id', optional: false });
    const pod = r.deployment('dashboards-runtime').spec!.template.spec!;
    expect(pod.volumes!.map((v) => [v.name, !!v.emptyDir])).toEqual([
      ['tmp', true],
      ['data', true],
    ]);
    expect(r.all('PersistentVolumeClaim')).toEqual([]);
  });

  it('references secrets by name only and holds no secret value', () => {
    expect(r.all('Secret')).toEqual([]);
    const refs = r.docs
      .flatMap((d) => JSON.stringify(d).match(/"secretKeyRef":\{[^}]*\}/g) ?? [])
      .map((s) => JSON.parse(`{${s}}`).secretKeyRef);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(SECRETS[ref.name], `secret ${ref.name}`).toContain(ref.key);
    const env = (s: string) => r.env(s);
    expect(env('retrieval').SVC_PG_PASSWORD).toEqual({ secret: 'svc-postgres', key: 'password', optional: false });
    expect(env('explore').SVC_DASHBOARD_HMAC_KEY).toEqual({ secret: 'svc-dashboard-hmac', key: 'current', optional: false });
    expect(env('explore').SVC_DASHBOARD_HMAC_KEY_OLD).toEqual({ secret: 'svc-dashboard-hmac', key: 'old', optional: true });
    expect(env('dashboards-runtime').SVC_DASHBOARD_HMAC_KEY).toEqual({ secret: 'svc-dashboard-hmac', key: 'current', optional: false });
    // retrieval reaches OpenSearch (the search backend) in prod only, with its credentials from a secret
    if (overlay === 'prod') {
      expect(env('retrieval').SVC_OPENSEARCH_URL).toMatch(/^https:\/\//);
      expect(env('retrieval').SVC_OPENSEARCH_PASSWORD).toEqual({ secret: 'svc-opensearch', key: 'password', optional: false });
      expect(env('retrieval').SVC_OPENSEARCH_CA_FILE).toBe('/etc/svc/opensearch/ca.crt');
    } else expect(env('retrieval').SVC_OPENSEARCH_URL).toBeUndefined();
    // the processes that keep data sign the audit chain's head, with one key from a secret, into one bucket
    for (const name of ['retrieval', 'explore', 'tracker']) {
      expect(env(name).SVC_AUDIT_SIGNING_KEY, name).toEqual({ secret: 'svc-audit', key: 'signing-key', optional: false });
      expect(env(name).SVC_AUDIT_STORE, name).toBe('s3://svc-audit/');
    }
    for (const s of SERVICES) {
      for (const [name, value] of Object.entries(env(s.name))) {
        if (/(PASSWORD|_KEY$|_KEY_OLD$|_TOKEN$|SECRET|ACCESS_KEY)/.test(name)) expect(typeof value, `${s.name} ${name}`).toBe('object');
      }
    }
  });

  it(`${overlay === 'prod' ? 'maintains the lake collections every night' : 'has no lake, and no CronJob to maintain it'}`, () => {
    if (overlay !== 'prod') {
      expect(r.all('CronJob')).toEqual([]);
      expect(r.env('retrieval').SVC_TRINO_URL).toBeUndefined();
      return;
    }
    // retrieval's lake on Trino, as the service user with its token from the secret explore uses
    expect(r.env('retrieval')).toMatchObject({
      SVC_TRINO_URL: expect.stringMatching(/^https:\/\//),
      SVC_TRINO_SERVICE_USER: 'svc-service',
      SVC_RAG_LAKE_SCHEMA: 'iceberg.retrieval',
      SVC_TRINO_SERVICE_TOKEN: { secret: 'svc-trino', key: 'service-token', optional: false },
    });
    const cron = r.one<V1CronJob>('CronJob', 'svc-lake-maintain');
    expect(cron.spec!.schedule).toMatch(/^\d+ \d+ \* \* \*$/);
    expect(cron.spec!.concurrencyPolicy).toBe('Forbid');
    const pod = cron.spec!.jobTemplate.spec!.template.spec!;
    const c = pod.containers[0]!;
    expect(c.image).toBe(r.container('retrieval').image);
    expect(c.args).toEqual(['lake', 'maintain', '--retain', '7d']);
    // the retrieval service's settings and the secrets the command needs, by the same names
    expect(c.envFrom).toEqual(r.container('retrieval').envFrom!.filter((e) => !/^svc-(opensearch|auth)/.test(e.configMapRef?.name ?? '')));
    const byName = new Map((r.container('retrieval').env ?? []).map((e) => [e.name, e]));
    for (const e of c.env ?? []) expect(e, e.name).toEqual(byName.get(e.name));
    expect((c.env ?? []).map((e) => e.name).sort()).toEqual(['SVC_PG_PASSWORD', 'SVC_TRINO_SERVICE_TOKEN']);
  });

  it('runs every container as non-root on a read-only root file system, with limits', () => {
    const pods = [
      ...[...r.all<V1Deployment>('Deployment'), ...r.all<V1Job>('Job')].map((w) => w.spec!.template.spec!),
      ...r.all<V1CronJob>('CronJob').map((c) => c.spec!.jobTemplate.spec!.template.spec!),
    ];
    for (const pod of pods) {
      // What the Pod Security Standards' restricted profile asks for, so the namespace can enforce it.
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        expect(c.securityContext, c.name).toMatchObject({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        expect(c.resources?.limits, c.name).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
      }
    }
    // Only the runtime holds a token (it manages sandbox pods).
    for (const d of r.all<V1Deployment>('Deployment')) {
      expect(d.spec!.template.spec!.automountServiceAccountToken, d.metadata!.name).toBe(d.metadata!.name === 'svc-dashboards-runtime');
    }
  });

  it('forwards authentication at the ingress and sets the identity headers from the proxy only', () => {
    const ing = r.one<V1Ingress>('Ingress', 'svc');
    const a = ing.metadata!.annotations!;
    expect(a['nginx.ingress.kubernetes.io/auth-url']).toMatch(/^https?:\/\//);
    expect(a['nginx.ingress.kubernetes.io/auth-signin']).toBeTruthy();
    expect(a['nginx.ingress.kubernetes.io/auth-response-headers']!.split(',')).toEqual(
      expect.arrayContaining(['X-User-Id', 'X-User-Role', 'X-User-Groups', 'X-User-Token', 'X-Query-User']),
    );
    expect(ing.spec!.ingressClassName).toBe('nginx');
    const backends = ing.spec!.rules!.map((rule) => rule.http!.paths[0]!.backend.service!);
    expect(backends.map((b) => [b.name, b.port!.number])).toEqual(SERVICES.map((s) => [`svc-${s.name}`, s.port]));
  });

  it(`runs every service in ${overlay === 'prod' ? "jwt mode behind the namespace's oauth2-proxy" : 'headers mode'}`, () => {
    const auth = r.docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name.startsWith('svc-auth'));
    const usesAuth = (name: string) => (r.container(name).envFrom ?? []).some((e) => e.configMapRef?.name === auth?.metadata.name);
    if (overlay !== 'prod') {
      expect(auth).toBeUndefined();
      return;
    }
    expect(auth.data).toMatchObject({
      SVC_AUTH_MODE: 'jwt',
      SVC_OIDC_AUDIENCE: 'svc',
      SVC_OIDC_ISSUER: expect.stringMatching(/^https:\/\//),
    });
    for (const s of SERVICES) expect(usesAuth(s.name), s.name).toBe(true);
    const proxy = r.one<V1Deployment>('Deployment', 'oauth2-proxy').spec!.template.spec!.containers[0]!;
    expect(proxy.image).toBe('quay.io/oauth2-proxy/oauth2-proxy:v7.15.4');
    expect(proxy.args).toEqual(expect.arrayContaining(['--provider=oidc', '--set-xauthrequest', '--pass-access-token']));
    const a = r.one<V1Ingress>('Ingress', 'svc').metadata!.annotations!;
    expect(a['nginx.ingress.kubernetes.io/auth-url']).toBe('http://oauth2-proxy.svc.svc.cluster.local:4180/oauth2/auth');
    expect(a['nginx.ingress.kubernetes.io/auth-response-headers']!.split(',')).toContain('X-Auth-Request-Access-Token');
    expect(JSON.parse(JSON.stringify(r.one<V1NetworkPolicy>('NetworkPolicy', 'oauth2-proxy-ingress').spec!.ingress))).toEqual([
      { _from: [INGRESS_NS], ports: [{ protocol: 'TCP', port: 4180 }] },
    ]); // the client model's name for from
  });

  it('denies ingress by default and admits each service only from the ingress controller and the callers the specification allows', () => {
    const deny = r.one<V1NetworkPolicy>('NetworkPolicy', 'svc-default-deny-ingress');
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress'] });
    const runtimePods = {
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'svc', 'app.kubernetes.io/component': 'dashboards-runtime' } },
    };
    const allowed: Record<string, V1NetworkPolicyPeer[]> = {
      retrieval: [INGRESS_NS],
      explore: [INGRESS_NS, runtimePods],
      tracker: [
        INGRESS_NS,
        { namespaceSelector: { matchLabels: { 'svc/tracker-client': 'true' } } },
        { podSelector: { matchLabels: { 'svc/tracker-client': 'true' } } },
      ],
      'dashboards-runtime': [INGRESS_NS],
    };
    for (const s of SERVICES) {
      const policies = r.policyFor(r.deployment(s.name).spec!.template.metadata!.labels!);
      expect(
        policies.map((p) => p.metadata!.name),
        s.name,
      ).toEqual([`svc-${s.name}-ingress`]);
      expect(policies[0]!.spec!.ingress).toEqual([{ _from: allowed[s.name], ports: [{ protocol: 'TCP', port: s.port }] }]);
    }
  });

  it('confines dashboard sandboxes: reached only by the runtime, reaching exactly Trino and DNS', () => {
    const policies = r.policyFor(SANDBOX_LABELS);
    expect(policies.map((p) => p.metadata!.name)).toEqual(['svc-dashboard-sandbox']);
    const p = policies[0]!.spec!;
    expect(p.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(p.ingress).toEqual([
      {
        _from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'svc', 'app.kubernetes.io/component': 'dashboards-runtime' } } }],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
    ]);
    expect(p.egress).toEqual([
      {
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'trino' } },
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'trino' } },
          },
        ],
        ports: [{ protocol: 'TCP', port: 8443 }],
      },
      {
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
            podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
          },
        ],
        ports: [
          { protocol: 'UDP', port: 53 },
          { protocol: 'TCP', port: 53 },
        ],
      },
    ]);
    // No other policy selects sandbox pods and widens that (policies add up).
    expect(
      r
        .all<V1NetworkPolicy>('NetworkPolicy')
        .filter((x) => x.spec!.policyTypes!.includes('Egress'))
        .map((x) => x.metadata!.name),
    ).toEqual(['svc-dashboard-sandbox']);
  });

  it('lets the runtime manage pods in its namespace and nothing else; sandboxes get no token', () => {
    const role = r.one<V1Role>('Role', 'svc-dashboards-runtime');
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['create', 'get', 'list', 'delete'] }]);
    expect(r.all('ClusterRole')).toEqual([]);
    expect(r.all('ClusterRoleBinding')).toEqual([]);
    const binding = r.one<V1RoleBinding>('RoleBinding', 'svc-dashboards-runtime');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'svc-dashboards-runtime' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'svc-dashboards-runtime', namespace: role.metadata!.namespace }]);
    expect(r.deployment('dashboards-runtime').spec!.template.spec!.serviceAccountName).toBe('svc-dashboards-runtime');
    const sandboxAccount = r.one<V1ServiceAccount>('ServiceAccount', 'svc-dashboard-sandbox');
    expect(sandboxAccount.automountServiceAccountToken).toBe(false);
    expect(r.env('dashboards-runtime').SVC_SANDBOX_SERVICE_ACCOUNT).toBe('svc-dashboard-sandbox');
  });

  it(`evaluates policies ${overlay === 'prod' ? 'in an OPA sidecar' : 'in-process (wasm)'} in retrieval and explore`, () => {
    for (const name of ['retrieval', 'explore']) {
      const pod = r.deployment(name).spec!.template.spec!;
      const opa = (pod.initContainers ?? []).find((c) => c.name === 'opa');
      if (overlay === 'prod') {
        expect(opa?.restartPolicy).toBe('Always');
        expect(opa?.image).toBe(r.container(name).image);
        expect(opa?.command).toEqual(
          expect.arrayContaining(['opa', 'run', '--server', '--addr=127.0.0.1:8181', '--config-file=/etc/svc-opa/opa.yaml']),
        );
        // The signed bundle through OPA's own bundles and keys configuration, from the overlay's ConfigMap.
        const volume = pod.volumes!.find((v) => v.name === 'opa-config');
        const config = r.one<{ data: Record<string, string> }>('ConfigMap', volume!.configMap!.name!).data['opa.yaml']!;
        expect(config).toMatch(/bundles:\n {2}svc:\n {4}service: policies\n {4}resource: svc\/bundle\.tar\.gz/);
        expect(config).toMatch(/signing: \{keyid: svc\}/);
        expect(config).toMatch(/keys:\n {2}svc:\n {4}algorithm: RS256/);
        expect(r.env(name).SVC_OPA_URL).toBe('http://127.0.0.1:8181');
      } else {
        expect(opa).toBeUndefined();
        expect(r.env(name).SVC_OPA_URL).toBeUndefined();
      }
    }
  });
});

// An import's workers as an Indexed Job (k8s/jobs/lake-import): one pod a shard, each `svc embed --import … --shard
// <its index>/<shards>`, with the retrieval service's lake settings and the importing user's token.
describe.skipIf(!kustomize)('k8s job lake-import', () => {
  it('runs one shard a pod of an Indexed Job, as many pods as shards', () => {
    const all: any[] = loadAllYaml(
      execFileSync(kustomize!, ['build', join(import.meta.dirname, '../../k8s/jobs/lake-import')], { encoding: 'utf8' }),
    );
    const job = all.find((o) => o.kind === 'Job') as V1Job;
    const settings = all.find((o) => o.kind === 'ConfigMap') as V1ConfigMap;
    const shards = Number(settings.data!.SVC_IMPORT_SHARDS);
    expect(job.spec).toMatchObject({ completionMode: 'Indexed', completions: shards, parallelism: shards });
    const pod = job.spec!.template.spec!;
    expect(pod.restartPolicy).toBe('Never');
    const c = pod.containers[0]!;
    expect(c.args!.slice(0, 6)).toEqual([
      'embed',
      '$(SVC_IMPORT_COLLECTION)',
      '--import',
      '$(SVC_IMPORT_ID)',
      '--shard',
      '$(JOB_COMPLETION_INDEX)/$(SVC_IMPORT_SHARDS)',
    ]);
    expect(c.envFrom!.map((e) => e.configMapRef!.name)).toEqual(
      expect.arrayContaining(['svc-platform', 'svc-retrieval', 'svc-lake', settings.metadata!.name]),
    );
    const secrets = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.valueFrom?.secretKeyRef?.name]));
    expect(secrets).toEqual({ SVC_PG_PASSWORD: 'svc-postgres', SVC_TRINO_SERVICE_TOKEN: 'svc-trino', SVC_TOKEN: 'svc-import-token' });
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
  });
});
