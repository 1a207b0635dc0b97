import type { Sandbox, SandboxLauncher, SandboxPage } from './sandbox/launcher.ts';

// Running sandboxes by (viewer, dashboard). A sandbox is reused by the same viewer for the same page digest and
// stopped after an idle time; a re-signed page gets a fresh one. The pool is bounded: at most `max` sandboxes, and
// `maxPerUser` for one viewer. When a new one would pass a bound, the longest-idle sandbox not serving a request
// (that viewer's own, for the per-viewer bound) is stopped first; when every one is busy, the request is refused
// with PoolFullError, which the app answers 503 with Retry-After.
type Entry = { key: string; user: string; sandbox: Promise<Sandbox>; digest: string; lastUsed: number; active: number };

export type PoolLimits = { idleSeconds: number; max: number; maxPerUser: number };

export class PoolFullError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'PoolFullError';
  }
}

export function createSandboxPool(launcher: SandboxLauncher, limits: PoolLimits) {
  const running = new Map<string, Entry>();
  const stop = (entry: Entry) => {
    running.delete(entry.key);
    void entry.sandbox.then(
      (s) => s.stop(),
      () => {},
    );
  };
  const sweep = setInterval(() => {
    const cutoff = Date.now() - limits.idleSeconds * 1000;
    for (const entry of running.values()) if (entry.active === 0 && entry.lastUsed < cutoff) stop(entry);
  }, Math.min(limits.idleSeconds, 30) * 1000);
  sweep.unref();

  /** Room for one more sandbox among `among`, under `bound`: the longest-idle one goes, or nothing can. */
  const makeRoom = (among: Entry[], bound: number, what: string) => {
    if (among.length < bound) return;
    const idle = among.filter((e) => e.active === 0).sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (!idle) throw new PoolFullError(`All ${bound} ${what} are serving requests; try again in a few seconds.`, 5);
    stop(idle);
  };

  function entryFor(input: { user: string; dashboardId: string; digest: string; page: SandboxPage }): Entry {
    const key = `${input.user}\u0000${input.dashboardId}`;
    const existing = running.get(key);
    if (existing && existing.digest === input.digest) return existing;
    if (existing) stop(existing);
    makeRoom(
      [...running.values()].filter((e) => e.user === input.user),
      limits.maxPerUser,
      `sandboxes of viewer ${input.user}`,
    );
    makeRoom([...running.values()], limits.max, 'dashboard sandboxes (SVC_SANDBOX_MAX)');
    const entry: Entry = { key, user: input.user, sandbox: launcher.launch(input), digest: input.digest, lastUsed: Date.now(), active: 0 };
    running.set(key, entry);
    entry.sandbox.catch(() => running.get(key) === entry && running.delete(key));
    return entry;
  }

  return {
    /** Runs `use` with the viewer's sandbox for this page, launching one if needed; the sandbox is busy meanwhile. */
    async withSandbox<T>(
      input: { user: string; dashboardId: string; digest: string; page: SandboxPage },
      use: (s: Sandbox) => Promise<T>,
    ): Promise<T> {
      const entry = entryFor(input);
      entry.active++;
      try {
        return await use(await entry.sandbox);
      } finally {
        entry.active--;
        entry.lastUsed = Date.now();
      }
    },
    get size() {
      return running.size;
    },
    async close() {
      clearInterval(sweep);
      await Promise.all([...running.values()].map(async (e) => (running.delete(e.key), (await e.sandbox.catch(() => undefined))?.stop())));
    },
  };
}
export type SandboxPool = ReturnType<typeof createSandboxPool>;
