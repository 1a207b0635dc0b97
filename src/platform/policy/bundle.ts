import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { SIGNATURES_FILE, signaturesJson, signFiles } from './signing.ts';
import { readTarGz, writeTarGz, type Files } from './tar.ts';

// The policy bundle svc publishes: one OPA bundle that both evaluators read. OPA takes the Rego and data.json
// (`opa run` with `bundles` and `keys` config); the services take policy.wasm and data.json. The manifest names no
// wasm entrypoint, so a plain OPA keeps policy.wasm as an inert file instead of trying to run it. Each decision's
// case table travels as svc/<name>/cases.json (a name OPA does not load): the bundle's own smoke cases, which a
// service runs before it lets a new bundle decide.
//
//   .manifest                 {"revision", "roots": ["svc"], "metadata": {"svc": {"decisions": [...]}}}
//   data.json                 data.svc.config
//   policy.wasm               the compiled decisions (opa build -t wasm)
//   svc/<name>/<name>.rego    the sources, tests left out
//   svc/<name>/cases.json     the case table
//   .signatures.json          OPA's signature over all of the above

export const BUNDLE_ROOT = 'svc';
/** What a bundle may inflate to: the committed build is about 200 KB. */
export const MAX_BUNDLE_BYTES = 64 * 1024 * 1024;

export type Manifest = { revision: string; roots: string[]; metadata?: { svc?: { decisions?: string[] } } };

export type Bundle = { files: Files; manifest: Manifest };

export class BundleError extends Error {
  override name = 'BundleError';
}

/** The files of a bundle from a wasm build folder and the policies folder, with its manifest. */
export async function assembleBundle(opts: {
  buildDir: string;
  policiesDir: string;
  decisions: string[];
  revision?: string;
}): Promise<Bundle> {
  const files: Files = new Map();
  files.set('policy.wasm', await readFile(join(opts.buildDir, 'policy.wasm')));
  files.set('data.json', await readFile(join(opts.buildDir, 'data.json')));
  const svcDir = join(opts.policiesDir, BUNDLE_ROOT);
  for (const path of await filesUnder(svcDir)) {
    const name = relative(opts.policiesDir, path).split(sep).join('/');
    if ((name.endsWith('.rego') && !name.endsWith('_test.rego')) || name.endsWith('/cases.json')) files.set(name, await readFile(path));
  }
  const manifest: Manifest = {
    revision: opts.revision ?? contentRevision(files),
    roots: [BUNDLE_ROOT],
    metadata: { svc: { decisions: [...opts.decisions].sort() } },
  };
  files.set('.manifest', new TextEncoder().encode(`${JSON.stringify(manifest, null, 1)}\n`));
  return { files, manifest };
}

/** The bundle signed (its `.signatures.json` replaced) and packed as a `.tar.gz`. */
export async function packSignedBundle(bundle: Bundle, key: { privateKeyPem: string; keyId: string }): Promise<Uint8Array> {
  const files: Files = new Map(bundle.files);
  files.delete(SIGNATURES_FILE);
  files.set(SIGNATURES_FILE, signaturesJson(await signFiles(files, key)));
  return writeTarGz(files);
}

/** The files and manifest of a `.tar.gz` bundle; no signature is checked here (see signing.ts). */
export function unpackBundle(archive: Uint8Array): Bundle {
  const files = readTarGz(archive, MAX_BUNDLE_BYTES);
  const raw = files.get('.manifest');
  if (!raw) throw new BundleError('the bundle has no .manifest');
  let manifest: Manifest;
  try {
    manifest = JSON.parse(new TextDecoder().decode(raw)) as Manifest;
  } catch {
    throw new BundleError('the bundle .manifest is not JSON');
  }
  if (typeof manifest?.revision !== 'string' || manifest.revision === '') throw new BundleError('the bundle .manifest has no revision');
  return { files, manifest };
}

/** A revision that names the content: the first 16 hex digits of a digest over every file's name and bytes. */
export function contentRevision(files: Files): string {
  const hash = createHash('sha256');
  for (const name of [...files.keys()].sort()) {
    if (name === '.manifest' || name === SIGNATURES_FILE) continue;
    hash.update(`${name}\0${files.get(name)!.length}\0`).update(files.get(name)!);
  }
  return `sha256-${hash.digest('hex').slice(0, 16)}`;
}

/** The case tables a bundle carries, by decision. */
export function bundleCases(files: Files): Map<string, unknown> {
  const cases = new Map<string, unknown>();
  for (const [name, bytes] of files) {
    const m = /^svc\/([a-z][a-z0-9_]*)\/cases\.json$/.exec(name);
    if (!m) continue;
    try {
      cases.set(m[1]!, (JSON.parse(new TextDecoder().decode(bytes)) as { cases?: unknown }).cases);
    } catch {
      throw new BundleError(`${name} is not JSON`);
    }
  }
  return cases;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(path)));
    else if (e.isFile()) out.push(path);
  }
  return out.sort();
}
