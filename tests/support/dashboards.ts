import type { CallerResolver } from '../../src/platform/auth/index.ts';
import { createRuntimeApp } from '../../dashboards-runtime/src/app.ts';
import { createSandboxPool, type PoolLimits, type SandboxPool } from '../../dashboards-runtime/src/pool.ts';
import { createProcessLauncher } from '../../dashboards-runtime/src/sandbox/launcher.ts';
import { createSessions } from '../../dashboards-runtime/src/viewer.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createMetrics } from '../../src/platform/metrics.ts';
import type { ExploreHarness, ExploreIdentity } from './explore.ts';
import { groupCaller, PEOPLE } from './identities.ts';

// The people of the sharing tests and who of them may open a dashboard of each visibility (shared with the user
// luke and the group finance). The same table drives explore's /access tests and the runtime's.
export const SHARING_PEOPLE = {
  owner: groupCaller(PEOPLE.olivia),
  listed: groupCaller(PEOPLE.luke),
  member: groupCaller(PEOPLE.gina),
  other: groupCaller(PEOPLE.oscar),
  viewer: groupCaller(PEOPLE.vera),
  admin: groupCaller(PEOPLE.adam),
} satisfies Record<string, ExploreIdentity>;
export type SharingPerson = keyof typeof SHARING_PEOPLE;

export const VISIBILITIES = ['private', 'users', 'groups', 'public'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export const CAN_VIEW: Record<SharingPerson, boolean[]> = {
  owner: [true, true, true, true],
  listed: [false, true, false, true],
  member: [false, false, true, true],
  other: [false, false, false, true],
  viewer: [false, false, false, false],
  admin: [true, true, true, true],
};

/** Every (person, visibility, may view) triple, for it.each. */
export const viewMatrix = () =>
  (Object.entries(CAN_VIEW) as [SharingPerson, boolean[]][]).flatMap(([who, row]) =>
    VISIBILITIES.map((v, i) => [who, v, row[i]!] as const),
  );

export type RuntimeHarness = {
  app: ReturnType<typeof createRuntimeApp>;
  explore: RunningServer;
  pool: SandboxPool;
  close(): Promise<void>;
};

/**
 * The dashboards runtime in front of an explore harness served over HTTP (the runtime asks explore for every
 * launch decision, as in a cluster), reading explore's page store, with process sandboxes. `keys` is read on each
 * request, so a test can rotate.
 */
export async function runtimeHarness(
  h: ExploreHarness,
  opts: { keys?: () => { current: string; old?: string | undefined }; limits?: Partial<PoolLimits>; callers?: CallerResolver } = {},
): Promise<RuntimeHarness> {
  const keys = opts.keys ?? (() => ({ current: 'test-key' }));
  const explore = await startServer(h.app, 0, '127.0.0.1');
  const pool = createSandboxPool(createProcessLauncher(), { idleSeconds: 60, max: 20, maxPerUser: 3, ...opts.limits });
  const app = createRuntimeApp({
    pool,
    pages: h.deps.pages,
    sessions: createSessions('test-key'),
    get keys() {
      return keys();
    },
    exploreUrl: explore.url,
    fetch,
    logger: createLogger('runtime', 'silent'),
    metrics: createMetrics('dashboards-runtime'),
    ready: async () => true,
    ...(opts.callers ? { callers: opts.callers } : {}),
  });
  return {
    app,
    explore,
    pool,
    close: async () => {
      await pool.close();
      await explore.close();
    },
  };
}
