import type { Sql } from '../../platform/db/index.ts';
import { doesNotExist, permissionDenied } from '../errors.ts';
import { DEFAULT_WORKSPACE, requestWorkspace, workspaceColumns } from './context.ts';

// The artifact proxy's paths start with the experiment whose files they are (`mlflow-artifacts:/<experiment>/...`
// is where new experiments put runs, models and traces). A path under an experiment of another workspace answers as
// that experiment would: it does not exist here. Paths outside any experiment (files put at the root by hand, or
// under an id no experiment has) belong to the default workspace, as everything before workspaces did.

/** Refuses a proxied artifact path (a store key) that is not the request's workspace's. */
export async function requireArtifactKeyInWorkspace(db: Sql, key: string): Promise<void> {
  if (!workspaceColumns()) return; // an older schema: everything is the default workspace's
  const workspace = requestWorkspace();
  const first = key.split('/')[0] ?? '';
  if (/^\d{1,18}$/.test(first)) {
    const [row] = await db.query<{ workspace: string }>(`SELECT workspace FROM tracker_experiments WHERE experiment_id = $1`, [first]);
    if ((row?.workspace ?? DEFAULT_WORKSPACE) !== workspace) throw doesNotExist(`No Experiment with id=${first} exists`);
    return;
  }
  if (workspace !== DEFAULT_WORKSPACE) {
    throw permissionDenied(`Artifact path '${key}' is outside the experiments of workspace '${workspace}'.`);
  }
}
