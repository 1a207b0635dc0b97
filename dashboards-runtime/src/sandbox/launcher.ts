import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// A fresh sandbox per (viewer, dashboard): viewers never share one. Locally a child process under Node's permission
// model; in Kubernetes a pod (same interface, added with the manifests). Idle sandboxes are stopped.
export type Sandbox = { url: string; pid: number | undefined; stop(): Promise<void> };
/** The page's bytes, signature line included, as the runtime fetched and verified them. */
export type SandboxPage = Uint8Array;

export interface SandboxLauncher {
  launch(input: { user: string; dashboardId: string; page: SandboxPage; digest: string }): Promise<Sandbox>;
}

const SCRIPT = fileURLToPath(new URL('./sandbox.mjs', import.meta.url));

/**
 * The flag that turns Node's permission model on in this Node (the pod sandbox runs the runtime's image, so the same
 * Node): `--permission` since 22.13, the experimental name before.
 */
export function permissionFlag(version = process.versions.node): string {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 13) ? '--permission' : '--experimental-permission';
}

/** The flags a local sandbox runs with: reads its script and page only; no writes, no child processes, no workers. */
export const sandboxArgs = (file: string): string[] => [
  permissionFlag(),
  `--allow-fs-read=${SCRIPT}`,
  `--allow-fs-read=${file}`,
  '--no-warnings',
];

/**
 * A child process per sandbox. The verified page is written to a folder of its own that only this sandbox may read
 * (and that goes with it), so no two sandboxes share a file and none reads the page store.
 */
export function createProcessLauncher(): SandboxLauncher {
  return {
    async launch({ page, digest }) {
      const dir = await mkdtemp(join(tmpdir(), 'svc-sandbox-'));
      const file = join(dir, 'page.html');
      await writeFile(file, page, { mode: 0o600 });
      const cleanup = () => rm(dir, { recursive: true, force: true });
      try {
        return await start(file, digest, cleanup);
      } catch (err) {
        await cleanup();
        throw err;
      }
    },
  };
}

function start(file: string, digest: string, cleanup: () => Promise<void>): Promise<Sandbox> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = fork(SCRIPT, [file, digest], {
      execArgv: sandboxArgs(file),
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: {},
    });
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
      child.once('exit', () => void cleanup());
      resolve({
        url: `http://127.0.0.1:${msg.port}`,
        pid: child.pid,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return void cleanup().then(done);
            child.once('exit', () => void cleanup().then(done));
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
