import type { Context } from 'hono';
import type { Caller } from '../../platform/identity.ts';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { permissionDenied } from '../errors.ts';

// The platform's own traces (the experiment SVC_TRACE_EXPERIMENT names) each record one caller's request: their
// question, the statement, the passages they were given. They are read and changed under the svc.tracker decision:
// administrators every trace, anyone else the traces of their own requests. Every other experiment is as open as
// MLflow's server keeps it. With no policy engine to ask, the platform's traces are refused (fail closed).

const TRACE_USER = 'mlflow.trace.user';

export type TraceAccess = {
  /** Refuses (403) when a trace named is the platform's and the caller may not reach it. */
  require(c: Context<AppEnv>, traceIds: readonly string[]): Promise<void>;
  /** Refuses a change to every trace of an experiment (deleting by time) unless the caller may reach them all. */
  requireEvery(c: Context<AppEnv>, experimentId: number): Promise<void>;
  /** For a search over these experiments: the user whose traces alone it may list, or undefined for no limit. */
  searchScope(c: Context<AppEnv>, experimentIds: readonly number[]): Promise<TraceScope | undefined>;
};
export type TraceScope = { experimentId: number; user: string };

export function traceAccess(deps: TrackerDeps): TraceAccess {
  const platform = deps.platformTraces;
  const callerOf = async (c: Context<AppEnv>): Promise<Caller | undefined> =>
    (c.get('caller') as Caller | undefined) ?? (await c.var.callers?.optionalCallerFrom(c.req.raw.headers));
  const decide = async (caller: Caller | undefined, traceUser?: string | null) => {
    if (!deps.policy) return { allow: false, reason: 'denied: no policy engine decides who reads the platform traces' };
    return deps.policy.decide('tracker', {
      user: caller?.user ?? '',
      roles: caller?.roles ?? [],
      ...(traceUser === undefined ? {} : { trace_user: traceUser }),
    });
  };

  return {
    async require(c, traceIds) {
      if (platform === undefined || traceIds.length === 0) return;
      const rows = await deps.db.query<{ trace_id: string; trace_user: string | null }>(
        `SELECT t.trace_id, m.value AS trace_user FROM tracker_traces t
         LEFT JOIN tracker_trace_metadata m ON m.trace_id = t.trace_id AND m.key = $3
         WHERE t.trace_id = ANY($1::text[]) AND t.experiment_id = $2`,
        [traceIds, platform, TRACE_USER],
      );
      if (rows.length === 0) return;
      const caller = await callerOf(c);
      // one decision per user the traces name (a batch of one user's traces asks once)
      const decisions = new Map<string | null, ReturnType<typeof decide>>();
      for (const row of rows) {
        if (!decisions.has(row.trace_user)) decisions.set(row.trace_user, decide(caller, row.trace_user));
        const decision = await decisions.get(row.trace_user)!;
        if (!decision.allow) throw permissionDenied(`Trace '${row.trace_id}' is a platform trace: ${decision.reason}.`);
      }
    },

    async requireEvery(c, experimentId) {
      if (experimentId !== platform) return;
      const decision = await decide(await callerOf(c));
      if (!decision.allow) throw permissionDenied(`Experiment ${experimentId} holds the platform's traces: ${decision.reason}.`);
    },

    async searchScope(c, experimentIds) {
      if (platform === undefined || !experimentIds.includes(platform)) return undefined;
      const caller = await callerOf(c);
      if ((await decide(caller)).allow) return undefined;
      // anyone else sees the traces of their own requests, if the policy lets them read those
      const own = await decide(caller, caller?.user ?? '');
      if (!own.allow) throw permissionDenied(`Experiment ${platform} holds the platform's traces: ${own.reason}.`);
      return { experimentId: platform, user: caller!.user };
    },
  };
}
