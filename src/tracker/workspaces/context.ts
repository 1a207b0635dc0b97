import { AsyncLocalStorage } from 'node:async_hooks';

// The workspace a request works in (MLflow's X-MLFLOW-WORKSPACE header; 'default' without it). MLflow keeps it in a
// request-scoped context variable that its stores read; the tracker does the same with AsyncLocalStorage, so the
// few loaders every route goes through (experiments, runs, models) scope their SQL without each of the ~60 store
// functions taking one more argument. Outside a request (start-up, tests of store functions) it is 'default'.

export const DEFAULT_WORKSPACE = 'default';
export const WORKSPACE_HEADER = 'X-MLFLOW-WORKSPACE';
/** The migration that adds workspaces: a server facing a schema without it serves reads without the columns. */
export const WORKSPACES_MIGRATION = '009_workspaces';

type Scope = { workspace: string; columns: boolean };
const current = new AsyncLocalStorage<Scope>();

/** The request's workspace. */
export const requestWorkspace = (): string => current.getStore()?.workspace ?? DEFAULT_WORKSPACE;

/** Whether the schema has the workspace columns (false only on a database not yet upgraded, read-only then). */
export const workspaceColumns = (): boolean => current.getStore()?.columns ?? true;

/** Runs `fn` with `workspace` as the request's workspace. */
export const inWorkspace = <T>(workspace: string, fn: () => T, columns = true): T => current.run({ workspace, columns }, fn);
