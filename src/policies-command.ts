// `svc policies <build|impact|explain>`: the policy author's commands. The policy port (src/platform/policy) does the
// work; this file parses the arguments and gathers what the port may not import itself: the dashboards and
// collections in the configured database and the tables of explore's catalog, each read with its service's own code.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { loadPlatformConfig, type Env } from './platform/config.ts';
import { openDatabase, type Database } from './platform/db/index.ts';
import { createLogger } from './platform/log.ts';
import { unpackBundle } from './platform/policy/bundle.ts';
import { buildPolicies, buildSignedBundle, POLICIES_DIR, withTempDir } from './platform/policy/build.ts';
import { explainDecision, formatExplanation } from './platform/policy/explain.ts';
import { formatImpact, policyImpact, type Config, type Person, type Side, type World } from './platform/policy/impact.ts';
import { loadWasmPolicy } from './platform/policy/wasm.ts';

const ROOT = dirname(POLICIES_DIR);

export const POLICIES_USAGE = `  policies build [--sign KEY.pem [--key-id ID] [--revision R] [--out FILE]]
                               compile policies/ to the committed wasm build (needs opa); with --sign also write
                               the signed OPA bundle (default policies/build/bundle.tar.gz)
  policies impact [--base REF|BUNDLE] [--users FILE] [--json] [--fail-on-gain]
                               who gains and who loses what between the base (a git ref, default HEAD, or a
                               bundle file) and the working tree's policies
  policies explain --user U --role R[,R] [--groups G,G] (--table T | --dashboard ID | --collection SLUG)
                               one decision over the working tree's policies: allow or deny, why, the rules that fired
`;

export class UsageError extends Error {}

export async function policiesCommand(sub: string | undefined, args: string[], env: Env): Promise<number> {
  const flags = parseFlags(args);
  switch (sub) {
    case 'build': {
      console.log(await buildPolicies());
      const key = flags.get('--sign');
      if (key === undefined) return 0;
      const signed = await buildSignedBundle({
        privateKeyPem: await readFile(key, 'utf8'),
        keyId: flags.get('--key-id') ?? 'svc',
        revision: flags.get('--revision'),
        out: resolve(flags.get('--out') ?? join(POLICIES_DIR, 'build/bundle.tar.gz')),
      });
      console.log(`signed bundle ${signed.out}: revision ${signed.revision}, decisions ${signed.decisions.join(', ')}`);
      return 0;
    }
    case 'impact':
      return impact(flags, env);
    case 'explain':
      return explain(flags, env);
    default:
      throw new UsageError(`unknown policies command '${sub ?? ''}'`);
  }
}

async function impact(flags: Map<string, string>, env: Env): Promise<number> {
  const baseRef = flags.get('--base') ?? 'HEAD';
  const world = await gatherWorld(env, flags.get('--users'));
  const report = await withTempDir(async (dir) => {
    const base = await sideOf(baseRef, join(dir, 'base'));
    const head = await builtSide('working tree', join(dir, 'head'));
    return policyImpact(base, head, world.world);
  });
  report.notes.push(...world.notes);
  process.stdout.write(flags.has('--json') ? `${JSON.stringify(report, null, 2)}\n` : formatImpact(report));
  return flags.has('--fail-on-gain') && report.gains.length > 0 ? 1 : 0;
}

/** A bundle file as it is; a git ref's policies/ compiled with today's build script. */
async function sideOf(base: string, dir: string): Promise<Side> {
  if (existsSync(base) && /\.tar\.gz$|\.tgz$/.test(base)) {
    const { files, manifest } = unpackBundle(await readFile(base));
    const wasm = files.get('policy.wasm');
    const data = files.get('data.json');
    if (!wasm || !data) throw new UsageError(`${base} holds no policy.wasm and data.json: build it with \`svc policies build --sign\``);
    return sideFrom(`bundle ${manifest.revision}`, wasm, data);
  }
  await mkdir(dir, { recursive: true });
  const archive = join(dir, 'policies.tar');
  await promisify(execFile)('git', ['-C', ROOT, 'archive', '--format=tar', '-o', archive, base, 'policies']).catch(
    (err: { stderr?: string }) => {
      throw new UsageError(`--base ${base} is neither a bundle file nor a git ref holding policies/: ${err.stderr?.trim() ?? ''}`);
    },
  );
  await promisify(execFile)('tar', ['-xf', archive, '-C', dir]);
  await cp(join(ROOT, 'scripts'), join(dir, 'scripts'), { recursive: true });
  return builtSide(base, join(dir, 'out'), dir);
}

/** The policies under `root` (default: this checkout) compiled into `out`. */
async function builtSide(label: string, out: string, root?: string): Promise<Side> {
  await buildPolicies(out, root ? { root } : {});
  return sideFrom(label, await readFile(join(out, 'policy.wasm')), await readFile(join(out, 'data.json')));
}

async function sideFrom(label: string, wasm: Uint8Array, data: Uint8Array): Promise<Side> {
  const policy = await loadWasmPolicy(wasm, data, label);
  const config = ((JSON.parse(new TextDecoder().decode(data)) as { svc?: { config?: Config } }).svc?.config ?? {}) as Config;
  return { label, policy, config };
}

/** Tables from explore's catalog, dashboards and collections from the configured database, people from --users. */
async function gatherWorld(env: Env, usersFile: string | undefined): Promise<{ world: World; notes: string[] }> {
  const notes: string[] = [];
  const world: World = { tables: [], dashboards: [], collections: [], users: usersFile ? await readUsers(usersFile) : [] };
  await withDatabase(env, notes, async (db) => {
    const { listDashboards } = await import('./explore/store.ts');
    const { listCollections } = await import('./retrieval/store.ts');
    world.dashboards = await listDashboards(db).catch((err: unknown) => (notes.push(`dashboards not read: ${String(err)}`), []));
    world.collections = await listCollections(db).catch((err: unknown) => (notes.push(`collections not read: ${String(err)}`), []));
  });
  try {
    const { loadExploreConfig } = await import('./explore/config.ts');
    const { openEngine } = await import('./explore/service.ts');
    const config = loadExploreConfig(env);
    const engine = await openEngine(config, { embedded: false, logger: createLogger('svc', 'silent') });
    try {
      const columns = await engine.columns(config.EXPLORE_FALLBACK_CATALOGS);
      world.tables = [...new Set(columns.map((c) => `${c.catalog}.${c.schema}.${c.table}`.toLowerCase()))];
    } finally {
      await engine.close();
    }
  } catch (err) {
    notes.push(`the catalog was not read (${String(err)}): tables are those the policy data names`);
  }
  return { world, notes };
}

async function withDatabase(env: Env, notes: string[], fn: (db: Database) => Promise<void>): Promise<void> {
  let db: Database;
  try {
    db = await openDatabase(loadPlatformConfig(env));
  } catch (err) {
    notes.push(`the database was not read (${String(err)}): no dashboards or collections compared`);
    return;
  }
  try {
    await fn(db);
  } finally {
    await db.close();
  }
}

async function readUsers(file: string): Promise<Person[]> {
  const parsed = JSON.parse(await readFile(file, 'utf8')) as unknown;
  const list = Array.isArray(parsed) ? parsed : (parsed as { users?: unknown })?.users;
  if (!Array.isArray(list) || !list.every((u) => typeof (u as Person)?.user === 'string')) {
    throw new UsageError(`--users ${file}: expected a JSON list of {"user": "...", "roles": [...], "groups": [...]}`);
  }
  return list as Person[];
}

async function explain(flags: Map<string, string>, env: Env): Promise<number> {
  const user = flags.get('--user');
  const roles = (flags.get('--role') ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const groups = (flags.get('--groups') ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean);
  const targets = ['--table', '--dashboard', '--collection'].filter((f) => flags.has(f));
  if (!user || roles.length === 0 || targets.length !== 1) {
    throw new UsageError('policies explain needs --user, --role and exactly one of --table, --dashboard or --collection');
  }
  let decision: string;
  let input: object;
  if (flags.has('--table')) {
    decision = 'tables';
    input = { user, roles, table: flags.get('--table') };
  } else {
    const id = flags.get(targets[0]!)!;
    const found = await readTarget(env, targets[0] === '--dashboard' ? 'dashboard' : 'collection', id);
    decision = targets[0] === '--dashboard' ? 'dashboards' : 'collections';
    input =
      targets[0] === '--dashboard'
        ? { user, roles, groups, action: 'view', dashboard: found }
        : { user, roles, action: 'read', collection: found };
  }
  process.stdout.write(formatExplanation(await explainDecision({ policiesDir: POLICIES_DIR, decision, input })));
  return 0;
}

async function readTarget(env: Env, kind: 'dashboard' | 'collection', id: string): Promise<object> {
  const notes: string[] = [];
  let found: object | undefined;
  await withDatabase(env, notes, async (db) => {
    if (kind === 'dashboard') {
      const d = await (await import('./explore/store.ts')).findDashboard(db, id);
      if (d) found = { owner: d.owner, visibility: d.visibility, allowed_users: d.allowed_users, allowed_groups: d.allowed_groups };
    } else {
      const c = await (await import('./retrieval/store.ts')).findCollection(db, id);
      if (c) found = { slug: c.slug, allowed_roles: c.allowed_roles };
    }
  });
  if (notes.length > 0) throw new Error(notes.join('; '));
  if (!found) throw new UsageError(`${kind} '${id}' does not exist in the configured database`);
  return found;
}

function parseFlags(args: string[]): Map<string, string> {
  const flags = new Map<string, string>();
  const valueless = new Set(['--json', '--fail-on-gain']);
  for (let i = 0; i < args.length; i++) {
    const name = args[i]!;
    if (!name.startsWith('--')) throw new UsageError(`unexpected argument '${name}'`);
    if (valueless.has(name)) flags.set(name, 'true');
    else {
      const value = args[++i];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
      flags.set(name, value);
    }
  }
  return flags;
}
