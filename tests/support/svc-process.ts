import { spawn } from 'node:child_process';
import { join } from 'node:path';

export type SvcProcess = {
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, then wait for the exit; at once when it has already exited. */
  stop(): Promise<void>;
  /** Still running: neither exited nor killed by a signal (an out-of-memory crash is an exit). */
  alive(): boolean;
};

/**
 * Starts the svc CLI (`bin/svc`, or another command such as bun with `src/main.ts`) and waits until its output
 * contains `until`, it exits, or `timeoutMs` passes; the caller's assertions on output() say which.
 */
export async function startSvc(
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { until: string; timeoutMs?: number; command?: string },
): Promise<SvcProcess> {
  let output = '';
  const child = spawn(opts.command ?? join(process.cwd(), 'bin/svc'), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  while (!output.includes(opts.until) && Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    output: () => output,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
