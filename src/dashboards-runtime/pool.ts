import type { Sandbox, SandboxLauncher } from './sandbox/launcher.ts';

// Running sandboxes by (viewer, dashboard). A sandbox is reused by the same viewer for the same page digest and
// stopped after an idle time; a re-signed page gets a fresh one.
type Entry = { sandbox: Promise<Sandbox>; digest: string; lastUsed: number };

export function createSandboxPool(launcher: SandboxLauncher, idleSeconds: number) {
  const running = new Map<string, Entry>();
  const stop = (key: string, entry: Entry) => {
    running.delete(key);
    void entry.sandbox.then((s) => s.stop(), () => {});
  };
  const sweep = setInterval(() => {
    const cutoff = Date.now() - idleSeconds * 1000;
    for (const [key, entry] of running) if (entry.lastUsed < cutoff) stop(key, entry);
  }, Math.min(idleSeconds, 30) * 1000);
  sweep.unref();
  return {
    async sandboxFor(input: { user: string; dashboardId: string; file: string; digest: string }): Promise<Sandbox> {
      const key = `${input.user}\u0000${input.dashboardId}`;
      const existing = running.get(key);
      if (existing && existing.digest === input.digest) {
        existing.lastUsed = Date.now();
        return existing.sandbox;
      }
      if (existing) stop(key, existing);
      const entry: Entry = { sandbox: launcher.launch(input), digest: input.digest, lastUsed: Date.now() };
      running.set(key, entry);
      entry.sandbox.catch(() => running.delete(key));
      return entry.sandbox;
    },
    get size() {
      return running.size;
    },
    async close() {
      clearInterval(sweep);
      await Promise.all([...running.entries()].map(async ([key, e]) => (running.delete(key), (await e.sandbox.catch(() => undefined))?.stop())));
    },
  };
}
export type SandboxPool = ReturnType<typeof createSandboxPool>;
