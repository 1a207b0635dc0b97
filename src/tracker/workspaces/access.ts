import type { Context } from 'hono';
import type { Caller } from '../../platform/identity.ts';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { permissionDenied } from '../errors.ts';
import { DEFAULT_WORKSPACE } from './context.ts';

// Who may use which workspace, and who manages them: the svc.tracker decision with a `workspace` in its input
// (docs/tracker.md). The default workspace is the tracker as it always was, open to every caller without asking.
// Any other workspace asks the policy; with no policy engine, or no identity, it is refused (fail closed).

export type WorkspaceAction = 'use' | 'manage';

export type WorkspaceAccess = {
  /** Whether the caller may do `action` in (or to) the workspace, with the policy's reason. */
  decide(c: Context<AppEnv>, workspace: string, action: WorkspaceAction): Promise<{ allow: boolean; reason: string }>;
  /** Refuses (403 PERMISSION_DENIED) unless the caller may. */
  require(c: Context<AppEnv>, workspace: string, action: WorkspaceAction): Promise<void>;
};

export function workspaceAccess(deps: Pick<TrackerDeps, 'policy'>): WorkspaceAccess {
  const callerOf = async (c: Context<AppEnv>): Promise<Caller | undefined> =>
    (c.get('caller') as Caller | undefined) ?? (await c.var.callers?.optionalCallerFrom(c.req.raw.headers));

  const decide: WorkspaceAccess['decide'] = async (c, workspace, action) => {
    if (workspace === DEFAULT_WORKSPACE && action === 'use') return { allow: true, reason: 'allowed: the default workspace' };
    if (!deps.policy) return { allow: false, reason: 'denied: no policy engine decides who uses workspaces' };
    const caller = await callerOf(c);
    return deps.policy.decide('tracker', {
      user: caller?.user ?? '',
      roles: caller?.roles ?? [],
      groups: caller?.groups ?? [],
      workspace,
      action,
    });
  };

  return {
    decide,
    async require(c, workspace, action) {
      const decision = await decide(c, workspace, action);
      if (!decision.allow) {
        const what = action === 'manage' ? `manage workspace '${workspace}'` : `use workspace '${workspace}'`;
        throw permissionDenied(`Permission denied to ${what}: ${decision.reason}.`);
      }
    },
  };
}
