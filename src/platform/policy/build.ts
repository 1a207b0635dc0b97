import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** `svc policies build`: compile policies/ with opa into the committed policies/build (or `outDir`). */
export async function buildPolicies(outDir?: string): Promise<string> {
  const script = fileURLToPath(new URL('../../../scripts/build-policies.sh', import.meta.url));
  const { stdout } = await promisify(execFile)('bash', outDir ? [script, outDir] : [script]);
  return stdout.trim();
}
