import type { CallerResolver } from '../../src/platform/auth/index.ts';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createLogger, type Logger } from '../../src/platform/log.ts';
import { createWasmPolicyEngine, type PolicyEngine } from '../../src/platform/policy/index.ts';
import { loadExploreConfig } from '../../src/explore/config.ts';
import { createEmbeddedEngine } from '../../src/explore/engines/embedded.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';
import { createExploreApp, exploreDeps, exploreService, openEngine } from '../../src/explore/service.ts';
import { PEOPLE, roleCaller } from './identities.ts';

// The explore app as a deployment builds it, in-process, on the embedded engine (shared across harnesses: it
// takes seconds to load) and a fresh in-memory database.
let sharedEngine: Promise<QueryEngine> | undefined;
/** Every table of the sample, as an engine call that may read any of them declares it (ExecuteOptions.reads). */
export const SAMPLE_TABLES = ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'].map(
  (t) => `tpch.tiny.${t}`,
);

export const embeddedEngine = () => (sharedEngine ??= createEmbeddedEngine());

export type ExploreIdentity = { user: string; role: string; groups?: string };
// without their groups: these tests give groups only where sharing with a group is what they test
export const as = {
  admin: roleCaller(PEOPLE.ada),
  engineer: roleCaller(PEOPLE.eve),
  analyst: roleCaller(PEOPLE.ana),
  analyst2: roleCaller(PEOPLE.abe),
  user: roleCaller(PEOPLE.uma),
  viewer: roleCaller(PEOPLE.vic),
} satisfies Record<string, ExploreIdentity>;

export type HarnessOptions = {
  engine?: QueryEngine;
  logger?: Logger;
  tokens?: Record<string, string>;
  callers?: CallerResolver;
  /** Every answer `call` gets is checked against the app's OpenAPI document (default); benchmarks turn it off. */
  conformance?: boolean;
  /** The policy engine (default: the committed bundle); a test of other policy data builds its own. */
  policy?: PolicyEngine;
  /** A database shared with another service (hybrid SQL reads retrieval's imports); default a fresh in-memory one, closed with the harness. */
  db?: Database;
};

export async function exploreHarness(env: Record<string, string> = {}, opts: HarnessOptions = {}) {
  const db: Database = opts.db ?? (await openPglite({}));
  await exploreService.migrate(db);
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-explore-'));
  const logger = opts.logger ?? createLogger('explore', 'silent');
  const config = loadExploreConfig({ SVC_DASHBOARD_HMAC_KEY: 'test-key', ...env });
  // settings of the embedded engine's pool and queue get an engine of their own, built as the service builds it
  const ownEngine =
    !opts.engine && Object.keys(env).some((k) => k.startsWith('SVC_ENGINE_'))
      ? await openEngine(config, { embedded: true, logger })
      : undefined;
  const deps = await exploreDeps({
    config,
    env,
    db,
    policy: opts.policy ?? (await createWasmPolicyEngine()),
    engine: opts.engine ?? ownEngine ?? (await embeddedEngine()),
    logger,
    dataDir,
  });
  if (opts.callers) deps.callers = opts.callers;
  const app = createExploreApp(deps);
  const headers = (who?: ExploreIdentity): Record<string, string> =>
    who
      ? {
          'X-User-Id': who.user,
          'X-User-Role': who.role,
          'X-User-Token': opts.tokens?.[who.user] ?? `token-of-${who.user}`,
          ...(who.groups ? { 'X-User-Groups': who.groups } : {}),
        }
      : {};
  return {
    app,
    deps,
    db,
    dataDir,
    async call(method: string, path: string, who?: ExploreIdentity, body?: unknown) {
      const res = await app.request(path, {
        method,
        headers: { ...headers(who), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (opts.conformance ?? true) await (await import('./openapi-contract.ts')).expectAnswerDocumented(app, method, path, res.clone());
      const text = await res.text();
      return {
        status: res.status,
        type: res.headers.get('content-type') ?? '',
        headers: res.headers,
        // JSON and problem+json parsed; anything else (a CSV) as its text
        body: text ? (/json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text) : undefined,
      };
    },
    ask(who: ExploreIdentity, body: Record<string, unknown>) {
      return this.call('POST', '/query', who, body);
    },
    close: async () => {
      await Promise.allSettled(deps.drawings.values());
      await deps.charts.close();
      await ownEngine?.close();
      if (!opts.db) await db.close();
    },
  };
}
export type ExploreHarness = Awaited<ReturnType<typeof exploreHarness>>;
