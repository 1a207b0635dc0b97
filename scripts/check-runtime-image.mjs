#!/usr/bin/env node
// What the dashboards runtime's image holds (the Dockerfile's `dashboards-runtime` target), checked without Docker:
// - the runtime's transitive closure (dashboards-runtime/src and the @svc/platform modules it reaches), which must be
//   exactly dashboards-runtime/image-files.txt, the list the image copies (`--write` rewrites it);
// - every package a file of that closure imports, which must be declared by that file's own package.json (the
//   runtime's, or @svc/platform's), so `npm ci --omit=dev -w dashboards-runtime` installs it;
// - the size of those files, of the node_modules that install brings (from package-lock.json) and of the policy build.
// .dependency-cruiser.cjs proves that none of it is a service, the database, the gateway or Trino.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const LIST = 'dashboards-runtime/image-files.txt';
// What the image copies besides the closure: the workspace manifests npm ci reads, and the sandbox scripts, which
// the runtime starts as processes (a path, not an import) and the sandbox pods run from the same image.
const ALWAYS = ['dashboards-runtime/package.json', 'src/platform/package.json'];
const OWNERS = { 'dashboards-runtime/': 'dashboards-runtime/package.json', 'src/platform/': 'src/platform/package.json' };

const cruise = JSON.parse(
  execFileSync('npx', ['depcruise', 'dashboards-runtime/src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  }),
);

const isFile = (p) => !p.startsWith('node_modules/') && (p.startsWith('dashboards-runtime/') || p.startsWith('src/'));
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const builtin = (specifier) => specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]);

const files = new Set(ALWAYS);
const used = new Map(); // package -> files importing it
const problems = [];
for (const m of cruise.modules) {
  if (!isFile(m.source)) continue;
  files.add(m.source);
  for (const d of m.dependencies) {
    if (builtin(d.module) || !d.resolved.startsWith('node_modules/')) {
      if (d.couldNotResolve) problems.push(`${m.source}: '${d.module}' does not resolve`);
      continue;
    }
    const pkg = packageOf(d.module);
    if (!used.has(pkg)) used.set(pkg, new Set());
    used.get(pkg).add(m.source);
  }
}
// What a closure file reaches without an import: a package's file by import.meta.resolve (the API reference's
// bundle), a file beside it by new URL('./…', import.meta.url) (a page's own script).
for (const file of [...files]) {
  if (!file.endsWith('.ts')) continue;
  const text = readFileSync(join(root, file), 'utf8');
  for (const [, specifier] of text.matchAll(/import\.meta\.resolve\(\s*'([^'.][^']*)'/g)) {
    const pkg = packageOf(specifier);
    if (!used.has(pkg)) used.set(pkg, new Set());
    used.get(pkg).add(file);
  }
  for (const [, relative] of text.matchAll(/new URL\(\s*'(\.\/[^']+)',\s*import\.meta\.url\)/g)) {
    const sibling = join(file, '..', relative);
    if (existsSync(join(root, sibling)) && lstatSync(join(root, sibling)).isFile()) files.add(sibling);
  }
}
// A worker script found that way (tracing-worker.mjs) is plain JavaScript the cruise did not read: its relative
// imports are in the image too.
for (const file of [...files]) {
  if (!file.endsWith('.mjs')) continue;
  const text = readFileSync(join(root, file), 'utf8');
  for (const [, relative] of text.matchAll(/from '(\.\.?\/[^']+)'/g)) files.add(join(file, '..', relative));
}
// Scripts the runtime starts by path (sandbox.mjs, pod-sandbox.mjs) are not imports: take every .mjs beside its code.
for (const f of readdirSync(join(root, 'dashboards-runtime/src/sandbox')))
  if (f.endsWith('.mjs')) files.add(`dashboards-runtime/src/sandbox/${f}`);

const manifest = (path) => JSON.parse(readFileSync(join(root, path), 'utf8'));
for (const [pkg, importers] of used) {
  for (const file of importers) {
    const owner = Object.entries(OWNERS).find(([prefix]) => file.startsWith(prefix))?.[1];
    const deps = owner ? (manifest(owner).dependencies ?? {}) : {};
    if (!owner || !(pkg in deps))
      problems.push(`${file} imports '${pkg}', which ${owner ?? 'no package.json of the image'} does not declare`);
  }
}

const listed = [...files].sort();
if (process.argv.includes('--write')) writeFileSync(join(root, LIST), `${listed.join('\n')}\n`);
const committed = existsSync(join(root, LIST)) ? readFileSync(join(root, LIST), 'utf8').split('\n').filter(Boolean) : [];
const missing = listed.filter((f) => !committed.includes(f));
const extra = committed.filter((f) => !files.has(f));
if (missing.length || extra.length)
  problems.push(
    `${LIST} is not the runtime's closure (run node scripts/check-runtime-image.mjs --write): ${[
      ...missing.map((f) => `+${f}`),
      ...extra.map((f) => `-${f}`),
    ].join(' ')}`,
  );

// The production install of the workspace, as package-lock.json describes it: its dependencies, @svc/platform's,
// and theirs, each resolved the way Node does (nearest node_modules first).
const lock = manifest('package-lock.json').packages;
const installed = new Set();
const visit = (from, name) => {
  // from a package at a/node_modules/b: a/node_modules/b/node_modules, then a/node_modules, then the root's
  for (let dir = from; ; dir = dir.includes('node_modules/') ? dir.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, '') : '') {
    const at = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    const entry = lock[at];
    if (entry) {
      if (installed.has(at)) return;
      installed.add(at);
      const target = entry.link ? entry.resolved : at;
      const deps = { ...(lock[target]?.dependencies ?? {}), ...(lock[target]?.optionalDependencies ?? {}) };
      for (const dep of Object.keys(deps)) visit(target, dep);
      return;
    }
    if (!dir) return;
  }
};
for (const dep of Object.keys(manifest('dashboards-runtime/package.json').dependencies)) visit('dashboards-runtime', dep);

const sizeOf = (path) => {
  const full = join(root, path);
  if (!existsSync(full)) return 0;
  const st = lstatSync(full);
  if (!st.isDirectory()) return st.size;
  return readdirSync(full).reduce((sum, f) => sum + sizeOf(join(path, f)), 0);
};
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const realPackages = [...installed].filter((p) => !lock[p].link);
const modulesBytes = realPackages.reduce((sum, p) => sum + sizeOf(p), 0);
const filesBytes = listed.reduce((sum, f) => sum + sizeOf(f), 0);
const policyBytes = sizeOf('policies/build');

console.log(`dashboards-runtime image: ${listed.length} files of code (${mb(filesBytes)}), imports ${used.size} packages:`);
console.log(`  ${[...used.keys()].sort().join(', ')}`);
console.log(
  `  production node_modules: ${realPackages.length} packages, ${mb(modulesBytes)}; policy build ${mb(policyBytes)}; ` +
    `total ${mb(filesBytes + modulesBytes + policyBytes)} over the Node base image`,
);
if (problems.length) {
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
