import { appendAudit } from '../../platform/audit/index.ts';
import { notFound } from '../../platform/errors.ts';
import type { Caller } from '../../platform/identity.ts';
import type { LaunchDecision } from '../../platform/launch-contract.ts';
import type { PolicyDecision, PolicyEngine } from '../../platform/policy/index.ts';
import type { ExploreDeps } from '../deps.ts';
import * as store from '../store.ts';
import { readyPage } from './drawing.ts';

// Who sees, shares and deletes a dashboard is the dashboards policy's decision, every time; nothing here filters
// by hand. A caller who may not act on a dashboard is told it does not exist (404), so existence is not revealed.
export type DashboardAction = 'view' | 'share' | 'delete';
export type Scope = 'mine' | 'shared' | 'public' | 'all';

/**
 * A dashboard as the API shows it: the row without where its page is kept, the time as ISO text, and how many cards
 * it holds (0 for one question's dashboard) rather than their ids, and its address in the runtime.
 */
export type DashboardView = Omit<
  store.DashboardRow,
  'file' | 'object_key' | 'digest' | 'created_at' | 'cards' | 'page_state' | 'page_error'
> & {
  created_at: string;
  cards: number;
  url: string;
};

export const dashboardUrl = (deps: ExploreDeps, id: string) => `${deps.config.DASHBOARDS_URL.replace(/\/$/, '')}/d/${id}`;

export const view = (
  deps: ExploreDeps,
  {
    file: _file,
    object_key: _key,
    digest: _digest,
    page_state: _state,
    page_error: _error,
    created_at,
    cards,
    ...rest
  }: store.DashboardRow,
): DashboardView => ({
  ...rest,
  cards: cards?.length ?? 0,
  url: dashboardUrl(deps, rest.id),
  created_at: created_at.toISOString(),
});

export function decideDashboard(
  policy: PolicyEngine,
  caller: Caller,
  action: DashboardAction,
  d: store.DashboardRow,
): Promise<PolicyDecision> {
  return policy.decide('dashboards', {
    user: caller.user,
    roles: caller.roles,
    groups: caller.groups,
    action,
    dashboard: { owner: d.owner, visibility: d.visibility, allowed_users: d.allowed_users, allowed_groups: d.allowed_groups },
  });
}

/** The dashboards the caller may open, narrowed by scope: mine (owned), shared (users or groups), public, all. */
export async function listVisible(deps: ExploreDeps, caller: Caller, scope: Scope): Promise<DashboardView[]> {
  const rows = await store.listDashboards(deps.db);
  const decisions = await Promise.all(rows.map((d) => decideDashboard(deps.policy, caller, 'view', d)));
  const inScope = (d: store.DashboardRow) =>
    scope === 'all' ||
    (scope === 'mine' && d.owner === caller.user) ||
    (scope === 'shared' && d.owner !== caller.user && (d.visibility === 'users' || d.visibility === 'groups')) ||
    (scope === 'public' && d.visibility === 'public');
  return rows.filter((d, i) => decisions[i]!.allow && inScope(d)).map((d) => view(deps, d));
}

export async function accessOf(deps: ExploreDeps, caller: Caller, id: string): Promise<PolicyDecision> {
  const d = await store.findDashboard(deps.db, id);
  if (!d) throw notFound(`Dashboard '${id}' does not exist.`);
  return decideDashboard(deps.policy, caller, 'view', d);
}

/**
 * GET /dashboards/{id}/launch, the runtime's one question before it opens a page for a viewer: the policy's
 * decision, and only when it allows, where the page is, its sha256 and its owner (the page's signature names them).
 */
export type Launch = LaunchDecision; // the contract the runtime reads (platform/launch-contract.ts)

export async function launchOf(deps: ExploreDeps, caller: Caller, id: string): Promise<Launch> {
  const found = await store.findDashboard(deps.db, id);
  if (!found) throw notFound(`Dashboard '${id}' does not exist.`);
  const decision = await decideDashboard(deps.policy, caller, 'view', found);
  if (!decision.allow) return { allow: false, reason: decision.reason };
  // only then is the page's state told: a page being drawn is waited for, one that could not be drawn is a 409
  const d = await readyPage(deps, id, found);
  if (!d.object_key || !d.digest)
    throw notFound(`Dashboard '${id}' has no page in the store yet: an operator runs \`svc dashboards resign\` after upgrading.`);
  return { allow: true, reason: decision.reason, object_key: d.object_key, digest: d.digest, owner: d.owner };
}

export async function shareDashboard(
  deps: ExploreDeps,
  caller: Caller,
  id: string,
  share: { visibility: store.DashboardRow['visibility']; allowed_users: string[]; allowed_groups: string[] },
): Promise<DashboardView> {
  const d = await store.findDashboard(deps.db, id);
  if (!d || !(await decideDashboard(deps.policy, caller, 'share', d)).allow) throw notFound(`Dashboard '${id}' does not exist.`);
  const next = {
    visibility: share.visibility,
    allowed_users: [...new Set(share.allowed_users)],
    allowed_groups: [...new Set(share.allowed_groups)],
  };
  const before = { visibility: d.visibility, allowed_users: d.allowed_users, allowed_groups: d.allowed_groups };
  await deps.db.transaction(async (tx) => {
    await store.updateSharing(tx, id, next);
    await appendAudit(tx, {
      service: 'explore',
      action: 'dashboard_share',
      actor: caller.user,
      detail: { dashboard_id: id, owner: d.owner, before, after: next },
    });
  });
  return view(deps, { ...d, ...next });
}

export async function deleteDashboard(deps: ExploreDeps, caller: Caller, id: string): Promise<{ deleted: string }> {
  const d = await store.findDashboard(deps.db, id);
  if (!d || !(await decideDashboard(deps.policy, caller, 'delete', d)).allow) throw notFound(`Dashboard '${id}' does not exist.`);
  await deps.db.transaction(async (tx) => {
    await store.markDashboardDeleted(tx, id);
    await appendAudit(tx, {
      service: 'explore',
      action: 'dashboard_delete',
      actor: caller.user,
      detail: { dashboard_id: id, owner: d.owner, visibility: d.visibility },
    });
  });
  return { deleted: id };
}
