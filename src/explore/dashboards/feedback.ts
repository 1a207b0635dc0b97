import { notFound } from '../../platform/errors.ts';
import type { Caller } from '../../platform/identity.ts';
import type { ExploreDeps } from '../deps.ts';
import * as store from '../store.ts';
import { decideDashboard } from './sharing.ts';

// POST /feedback: a rating counts only from someone who may open the dashboard; to anyone else it does not exist.
export async function recordFeedback(
  deps: ExploreDeps,
  caller: Caller,
  feedback: { dashboard_id: string; rating: 'up' | 'down'; comment: string },
): Promise<void> {
  const d = await store.findDashboard(deps.db, feedback.dashboard_id);
  if (!d || !(await decideDashboard(deps.policy, caller, 'view', d)).allow)
    throw notFound(`Dashboard '${feedback.dashboard_id}' does not exist.`);
  await store.insertFeedback(deps.db, { dashboard: d.id, user: caller.user, rating: feedback.rating, comment: feedback.comment });
}
