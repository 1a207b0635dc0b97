import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export type SvcRun = { code: number; stdout: string; stderr: string };

/** The preload that makes any socket bind in the child fail loudly (tests/support/refuse-listen.mjs). */
export const REFUSE_LISTEN = `--import ${pathToFileURL(join(import.meta.dirname, 'refuse-listen.mjs')).href}`;

/** Runs `bin/svc args` to its end (a command that should exit), with its exit code and both outputs. */
export function runSvc(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 170_000): Promise<SvcRun> {
  return new Promise((resolve) => {
    execFile(join(process.cwd(), 'bin/svc'), args, { env, timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
