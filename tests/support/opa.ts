import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * A real OPA server serving policies/ on loopback, started (or reused) by scripts/start-opa.sh; returns its URL.
 * The port is SVC_IT_OPA_PORT, else 18181.
 */
export function startOpa(port = process.env.SVC_IT_OPA_PORT ?? '18181'): string {
  const script = fileURLToPath(new URL('../../scripts/start-opa.sh', import.meta.url));
  const out = execFileSync('bash', [script, String(port)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const url = out.trim().split('\n').pop();
  if (!url?.startsWith('http://127.0.0.1:')) throw new Error(`scripts/start-opa.sh printed no URL: ${out}`);
  return url;
}
