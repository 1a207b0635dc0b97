import { requestWorkspace, workspaceColumns } from './context.ts';

// The SQL that keeps a statement inside the request's workspace. Experiments, registered models and evaluation
// datasets carry the workspace; runs, logged models and traces belong to theirs through experiment_id, model
// versions through their model's name. On a schema not yet upgraded (no workspace columns; the server is read-only
// then, and everything is in 'default') each condition is the always-true use of its parameter.

const unscoped = (param: string) => `${param}::text IS NOT NULL`;

/** True when `column` (a workspace column) is the workspace the placeholder `param` holds. */
export const workspaceIs = (column: string, param: string): string => (workspaceColumns() ? `${column} = ${param}` : unscoped(param));

/** True when the experiment that `column` names is in the workspace the placeholder `param` holds. */
export const experimentInWorkspace = (column: string, param: string): string =>
  workspaceColumns() ? `${column} IN (SELECT experiment_id FROM tracker_experiments WHERE workspace = ${param})` : unscoped(param);

/** True when the registered model that `column` names is in the workspace the placeholder `param` holds. */
export const modelInWorkspace = (column: string, param: string): string =>
  workspaceColumns() ? `${column} IN (SELECT name FROM tracker_registered_models WHERE workspace = ${param})` : unscoped(param);

export { requestWorkspace };
