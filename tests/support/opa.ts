import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A real OPA server serving policies/ on loopback, started (or reused) by scripts/start-opa.sh; returns its URL.
 * The port is SVC_IT_OPA_PORT, else 18181. `root` is a copy of the repository (its scripts/ and policies/) to
 * serve instead of this one.
 */
export function startOpa(port: string | number = process.env.SVC_IT_OPA_PORT ?? '18181', root = repository): string {
  const out = execFileSync('bash', [join(root, 'scripts/start-opa.sh'), String(port)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = out.trim().split('\n').pop();
  if (!url?.startsWith('http://127.0.0.1:')) throw new Error(`scripts/start-opa.sh printed no URL: ${out}`);
  return url;
}

/** Stops the server startOpa started on that port. */
export function stopOpa(port: string | number, root = repository): void {
  execFileSync('bash', [join(root, 'scripts/stop-opa.sh'), String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A copy of the repository's policies, scripts and Regal configuration in a temporary folder, to edit and build. */
export function copyOfPolicies(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-policies-'));
  for (const part of ['policies', 'scripts', '.regal']) cpSync(join(repository, part), join(dir, part), { recursive: true });
  return dir;
}
