import { requestWorkspace } from './context.ts';

// The SQL that keeps a statement inside the request's workspace. Experiments (and registered models) carry the
// workspace; runs, logged models and traces belong to theirs through experiment_id.

/** True when the experiment that `column` names is in the workspace the placeholder `param` holds. */
export const experimentInWorkspace = (column: string, param: string): string =>
  `${column} IN (SELECT experiment_id FROM tracker_experiments WHERE workspace = ${param})`;

/** True when the registered model that `column` names is in the workspace the placeholder `param` holds. */
export const modelInWorkspace = (column: string, param: string): string =>
  `${column} IN (SELECT name FROM tracker_registered_models WHERE workspace = ${param})`;

export { requestWorkspace };
