import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { assembleBundle, contentRevision, packSignedBundle } from './bundle.ts';
import { loadWasmPolicy } from './wasm.ts';

export const POLICIES_DIR = fileURLToPath(new URL('../../../policies', import.meta.url));
const script = fileURLToPath(new URL('../../../scripts/build-policies.sh', import.meta.url));

/** `svc policies build`: compile policies/ with opa into the committed policies/build (or `outDir`). */
export async function buildPolicies(outDir?: string, opts: { root?: string } = {}): Promise<string> {
  const run = opts.root ? join(opts.root, 'scripts/build-policies.sh') : script;
  const { stdout } = await promisify(execFile)('bash', outDir ? [run, outDir] : [run]);
  return stdout.trim();
}

/**
 * `svc policies build --sign KEY`: the bundle both evaluators read (policy/bundle.ts), from the committed build and
 * the sources beside it, signed with the PEM private key in OPA's format and written to `out`.
 */
export async function buildSignedBundle(opts: {
  privateKeyPem: string;
  keyId: string;
  out: string;
  revision?: string | undefined;
  buildDir?: string;
  policiesDir?: string;
}): Promise<{ out: string; revision: string; decisions: string[] }> {
  const buildDir = opts.buildDir ?? join(POLICIES_DIR, 'build');
  const [wasm, data] = await Promise.all([readFile(join(buildDir, 'policy.wasm')), readFile(join(buildDir, 'data.json'))]);
  const { decisions } = await loadWasmPolicy(wasm, data, contentRevision(new Map()));
  const bundle = await assembleBundle({
    buildDir,
    policiesDir: opts.policiesDir ?? POLICIES_DIR,
    decisions,
    ...(opts.revision ? { revision: opts.revision } : {}),
  });
  await mkdir(dirname(opts.out), { recursive: true });
  await writeFile(opts.out, await packSignedBundle(bundle, { privateKeyPem: opts.privateKeyPem, keyId: opts.keyId }));
  return { out: opts.out, revision: bundle.manifest.revision, decisions };
}

/** A temporary folder removed after `fn`, for builds of other trees (impact's base). */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-policies-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
