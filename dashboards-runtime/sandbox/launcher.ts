import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// A fresh sandbox per (viewer, dashboard): viewers never share one. Locally a child process under Node's permission
// model; in Kubernetes a pod (same interface, added with the manifests). Idle sandboxes are stopped.
export type Sandbox = { url: string; pid: number | undefined; stop(): Promise<void> };

export interface SandboxLauncher {
  launch(input: { user: string; dashboardId: string; file: string; digest: string }): Promise<Sandbox>;
}

const SCRIPT = fileURLToPath(new URL('./sandbox.mjs', import.meta.url));

/** The flags a local sandbox runs with: reads its script and page only; no writes, no child processes, no workers. */
export const sandboxArgs = (file: string): string[] => ['--experimental-permission', `--allow-fs-read=${SCRIPT}`, `--allow-fs-read=${file}`, '--no-warnings'];

export function createProcessLauncher(): SandboxLauncher {
  return {
    launch: ({ file, digest }) =>
      new Promise((resolve, reject) => {
        const child: ChildProcess = fork(SCRIPT, [file, digest], { execArgv: sandboxArgs(file), stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: {} });
        let stderr = '';
        child.stderr?.on('data', (d) => (stderr += d));
        const timer = setTimeout(() => fail(new Error('the sandbox did not start within 10 s')), 10_000);
        const fail = (err: Error) => {
          clearTimeout(timer);
          child.kill('SIGKILL');
          reject(err);
        };
        child.once('exit', (code) => fail(new Error(`the sandbox exited (${code}): ${stderr.trim()}`)));
        child.once('message', (msg: { port: number }) => {
          clearTimeout(timer);
          child.removeAllListeners('exit');
          resolve({
            url: `http://127.0.0.1:${msg.port}`,
            pid: child.pid,
            stop: () =>
              new Promise<void>((done) => {
                if (child.exitCode !== null) return done();
                child.once('exit', () => done());
                child.kill('SIGTERM');
              }),
          });
        });
      }),
  };
}
