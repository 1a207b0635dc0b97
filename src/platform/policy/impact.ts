import { evaluateWasm, type LoadedPolicy } from './wasm.ts';

// `svc policies impact`: who gains and who loses which access between two versions of the policies. Both versions
// are evaluated (their wasm builds, in-process) over every pair the command can find: each known role and each
// named user or group against every table, dashboard, collection and console. A user or group whose roles are
// unknown is tried under every known role; a change that the bare role already shows is reported once, for the
// role, so a grant to svc-viewer reads as one line rather than one per viewer.

export type Side = { label: string; policy: LoadedPolicy; config: Config };
export type Config = { known_roles?: unknown; console_roles?: unknown; table_grants?: unknown; table_denies?: unknown };

export type Person = { user: string; roles?: string[] | undefined; groups?: string[] | undefined };
export type Dashboard = { id: string; owner: string; visibility: string; allowed_users: string[]; allowed_groups: string[] };
export type Collection = { slug: string; allowed_roles: string[] };
export type World = { tables: string[]; dashboards: Dashboard[]; collections: Collection[]; users: Person[] };

export type Resource = { kind: 'table' | 'dashboard' | 'collection' | 'console'; id: string };
export type Change = { subject: string; roles: string[]; resource: Resource; actions: string[]; before: string; after: string };
export type Impact = { base: string; head: string; gains: Change[]; losses: Change[]; notes: string[] };

type Subject = { label: string; user: string; roles: string[]; groups: string[]; asRole?: string };
type Check = { decision: string; resource: Resource; action: string; input: (s: Subject) => object };

export function policyImpact(base: Side, head: Side, world: World): Impact {
  const notes: string[] = [];
  const both = base.policy.decisions.filter((d) => head.policy.decisions.includes(d));
  for (const d of new Set([...base.policy.decisions, ...head.policy.decisions])) {
    if (!both.includes(d))
      notes.push(`decision ${d} exists only in ${base.policy.decisions.includes(d) ? base.label : head.label}: not compared`);
  }
  const roles = [...new Set([...stringList(base.config.known_roles), ...stringList(head.config.known_roles)])].sort();
  const checks = checksFor(world, [base.config, head.config]).filter((c) => both.includes(c.decision));
  const subjects = subjectsFor(world, roles, [base.config, head.config]);

  // (subject label, resource, direction) -> the change, its actions merged
  const found = new Map<string, Change & { direction: 'gain' | 'loss'; asRole?: string | undefined }>();
  const byRole = new Set<string>();
  for (const s of subjects) {
    for (const c of checks) {
      const input = c.input(s);
      const before = evaluateWasm(base.policy, c.decision, input);
      const after = evaluateWasm(head.policy, c.decision, input);
      if (before.allow === after.allow) continue;
      const direction = after.allow ? 'gain' : 'loss';
      const what = `${c.resource.kind}\0${c.resource.id}\0${c.action}\0${direction}`;
      if (!s.asRole && s.label.startsWith('role ')) byRole.add(`${s.roles[0]}\0${what}`);
      // Explained by a role's own change: reported for the role.
      if (s.asRole && byRole.has(`${s.asRole}\0${what}`)) continue;
      if (!s.asRole && !s.label.startsWith('role ') && s.roles.some((r) => byRole.has(`${r}\0${what}`))) continue;
      const key = `${s.label}\0${c.resource.kind}\0${c.resource.id}\0${direction}`;
      const known = found.get(key);
      if (known) {
        if (!known.actions.includes(c.action)) known.actions.push(c.action);
        if (!known.roles.includes(s.roles[0]!) && s.asRole) known.roles.push(s.asRole);
      } else {
        found.set(key, {
          subject: s.label,
          roles: [...s.roles],
          resource: c.resource,
          actions: [c.action],
          before: before.reason,
          after: after.reason,
          direction,
          asRole: s.asRole,
        });
      }
    }
  }
  const changes = [...found.values()].map(({ direction, asRole: _, ...change }) => ({ direction, change }));
  const order = (a: Change, b: Change) =>
    a.subject.localeCompare(b.subject) || a.resource.kind.localeCompare(b.resource.kind) || a.resource.id.localeCompare(b.resource.id);
  return {
    base: base.label,
    head: head.label,
    gains: changes
      .filter((c) => c.direction === 'gain')
      .map((c) => c.change)
      .sort(order),
    losses: changes
      .filter((c) => c.direction === 'loss')
      .map((c) => c.change)
      .sort(order),
    notes,
  };
}

// Subjects are evaluated roles first, so every role's own changes are known before anyone tried under that role.
function subjectsFor(world: World, roles: string[], configs: Config[]): Subject[] {
  const out: Subject[] = roles.map((r) => ({ label: `role ${r}`, user: `(any ${r})`, roles: [r], groups: [] }));
  const described = new Set(world.users.map((u) => u.user));
  for (const u of world.users) {
    if (u.roles && u.roles.length > 0) out.push({ label: `user ${u.user}`, user: u.user, roles: u.roles, groups: u.groups ?? [] });
    else for (const r of roles) out.push({ label: `user ${u.user}`, user: u.user, roles: [r], groups: u.groups ?? [], asRole: r });
  }
  const named = new Set<string>();
  for (const c of configs)
    for (const kind of ['table_grants', 'table_denies'] as const) for (const u of Object.keys(usersOf(c[kind]))) named.add(u);
  for (const d of world.dashboards) for (const u of [d.owner, ...d.allowed_users]) named.add(u);
  for (const u of [...named].filter((n) => !described.has(n)).sort()) {
    for (const r of roles) out.push({ label: `user ${u}`, user: u, roles: [r], groups: [], asRole: r });
  }
  const groups = [...new Set(world.dashboards.flatMap((d) => d.allowed_groups))].sort();
  for (const g of groups)
    for (const r of roles) out.push({ label: `group ${g}`, user: `(a member of ${g})`, roles: [r], groups: [g], asRole: r });
  return out;
}

function checksFor(world: World, configs: Config[]): Check[] {
  const checks: Check[] = [];
  const tables = new Set(world.tables.map((t) => t.toLowerCase()));
  // Exact table names the policy data mentions are tables too, whether or not the catalog lists them.
  for (const c of configs) {
    for (const kind of ['table_grants', 'table_denies'] as const) {
      const grants = (c[kind] ?? {}) as {
        roles?: Record<string, unknown>;
        users?: Record<string, unknown>;
        role_exceptions?: Record<string, unknown>;
      };
      for (const list of [
        ...Object.values(grants.roles ?? {}),
        ...Object.values(grants.users ?? {}),
        ...Object.values(grants.role_exceptions ?? {}),
      ]) {
        for (const p of stringList(list)) if (/^[^.*]+\.[^.*]+\.[^.*]+$/.test(p)) tables.add(p.toLowerCase());
      }
    }
  }
  for (const table of [...tables].sort()) {
    checks.push({
      decision: 'tables',
      resource: { kind: 'table', id: table },
      action: 'read',
      input: (s) => ({ user: s.user, roles: s.roles, table }),
    });
  }
  for (const d of world.dashboards) {
    const dashboard = { owner: d.owner, visibility: d.visibility, allowed_users: d.allowed_users, allowed_groups: d.allowed_groups };
    checks.push({
      decision: 'dashboards',
      resource: { kind: 'dashboard', id: d.id },
      action: 'view',
      input: (s) => ({ user: s.user, roles: s.roles, groups: s.groups, action: 'view', dashboard }),
    });
  }
  for (const col of world.collections) {
    const collection = { slug: col.slug, allowed_roles: col.allowed_roles };
    for (const action of ['read', 'upload']) {
      checks.push({
        decision: 'collections',
        resource: { kind: 'collection', id: col.slug },
        action,
        input: (s) => ({ user: s.user, roles: s.roles, action, collection }),
      });
    }
  }
  const consoles = new Set(configs.flatMap((c) => Object.keys((c.console_roles ?? {}) as object)));
  for (const console of [...consoles].sort()) {
    checks.push({
      decision: 'console',
      resource: { kind: 'console', id: console },
      action: 'use',
      input: (s) => ({ user: s.user, roles: s.roles, console }),
    });
  }
  return checks;
}

const stringList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const usersOf = (v: unknown): Record<string, unknown> => (v as { users?: Record<string, unknown> } | undefined)?.users ?? {};

/** The report a person reads: gains, then losses, each grouped by who. */
export function formatImpact(impact: Impact): string {
  const lines = [`policy impact: ${impact.base} -> ${impact.head}`];
  for (const [title, sign, list] of [
    ['gains', '+', impact.gains],
    ['losses', '-', impact.losses],
  ] as const) {
    lines.push('', `${title}: ${list.length}`);
    let subject = '';
    for (const c of list) {
      if (c.subject !== subject)
        lines.push(`  ${(subject = c.subject)}${c.subject.startsWith('role ') ? '' : ` (as ${c.roles.join(', ')})`}`);
      lines.push(`    ${sign} ${c.resource.kind} ${c.resource.id} (${c.actions.join(', ')}): ${c.after}`);
    }
  }
  for (const n of impact.notes) lines.push('', `note: ${n}`);
  return `${lines.join('\n')}\n`;
}
