// What `svc policies <build|impact|explain>` run (policies.ts holds their flags). The policy port (src/platform/policy)
// does the work; this file gathers what the port may not import itself: the dashboards and
// collections in the configured database and the tables of explore's catalog, each read with its service's own code.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { loadPlatformConfig, type Env } from '../platform/config.ts';
import { openDatabase, type Database } from '../platform/db/index.ts';
import { createLogger } from '../platform/log.ts';
import { unpackBundle } from '../platform/policy/bundle.ts';
import { buildPolicies, buildSignedBundle, POLICIES_DIR, withTempDir } from '../platform/policy/build.ts';
import { explainDecision, formatExplanation } from '../platform/policy/explain.ts';
import { formatImpact, policyImpact, type Config, type Person, type Side, type World } from '../platform/policy/impact.ts';
import { loadWasmPolicy } from '../platform/policy/wasm.ts';
import { UsageError } from './usage-error.ts';

const ROOT = dirname(POLICIES_DIR);

export type BuildOptions = { sign?: string; keyId: string; revision?: string; out?: string };
export type ImpactOptions = { base: string; users?: string; json: boolean; failOnGain: boolean };
export type ExplainOptions = { user: string; role: string; groups?: string; table?: string; dashboard?: string; collection?: string };

export async function build(opts: BuildOptions): Promise<number> {
  console.log(await buildPolicies());
  if (opts.sign === undefined) return 0;
  const signed = await buildSignedBundle({
    privateKeyPem: await readFile(opts.sign, 'utf8'),
    keyId: opts.keyId,
    revision: opts.revision,
    out: resolve(opts.out ?? join(POLICIES_DIR, 'build/bundle.tar.gz')),
  });
  console.log(`signed bundle ${signed.out}: revision ${signed.revision}, decisions ${signed.decisions.join(', ')}`);
  return 0;
}

export async function impact(opts: ImpactOptions, env: Env): Promise<number> {
  const baseRef = opts.base;
  const world = await gatherWorld(env, opts.users);
  const report = await withTempDir(async (dir) => {
    const base = await sideOf(baseRef, join(dir, 'base'));
    const head = await builtSide('working tree', join(dir, 'head'));
    return policyImpact(base, head, world.world);
  });
  report.notes.push(...world.notes);
  process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatImpact(report));
  return opts.failOnGain && report.gains.length > 0 ? 1 : 0;
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
    const { listDashboards } = await import('../explore/store.ts');
    const { listCollections } = await import('../retrieval/store.ts');
    world.dashboards = await listDashboards(db).catch((err: unknown) => (notes.push(`dashboards not read: ${String(err)}`), []));
    world.collections = await listCollections(db).catch((err: unknown) => (notes.push(`collections not read: ${String(err)}`), []));
  });
  try {
    const { loadExploreConfig } = await import('../explore/config.ts');
    const { openEngine } = await import('../explore/service.ts');
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

export async function explain(opts: ExplainOptions, env: Env): Promise<number> {
  const { user } = opts;
  const listOf = (v: string | undefined) =>
    (v ?? '')
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean);
  const roles = listOf(opts.role);
  const groups = listOf(opts.groups);
  if (roles.length === 0) throw new UsageError('--role names no role');
  let decision: string;
  let input: object;
  if (opts.table !== undefined) {
    decision = 'tables';
    input = { user, roles, table: opts.table };
  } else if (opts.dashboard !== undefined) {
    decision = 'dashboards';
    input = { user, roles, groups, action: 'view', dashboard: await readTarget(env, 'dashboard', opts.dashboard) };
  } else {
    decision = 'collections';
    input = { user, roles, action: 'read', collection: await readTarget(env, 'collection', opts.collection ?? '') };
  }
  process.stdout.write(formatExplanation(await explainDecision({ policiesDir: POLICIES_DIR, decision, input })));
  return 0;
}

async function readTarget(env: Env, kind: 'dashboard' | 'collection', id: string): Promise<object> {
  const notes: string[] = [];
  let found: object | undefined;
  await withDatabase(env, notes, async (db) => {
    if (kind === 'dashboard') {
      const d = await (await import('../explore/store.ts')).findDashboard(db, id);
      if (d) found = { owner: d.owner, visibility: d.visibility, allowed_users: d.allowed_users, allowed_groups: d.allowed_groups };
    } else {
      const c = await (await import('../retrieval/store.ts')).findCollection(db, id);
      if (c) found = { slug: c.slug, allowed_roles: c.allowed_roles };
    }
  });
  if (notes.length > 0) throw new Error(notes.join('; '));
  if (!found) throw new UsageError(`${kind} '${id}' does not exist in the configured database`);
  return found;
}
