import { Hono, type MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { readRequest } from '../wire/request.ts';
import { optionalStr, requiredStr, str } from '../wire/fields.ts';
import { workspaceAccess } from './access.ts';
import { permissionDenied } from '../errors.ts';
import { UPGRADE_COMMAND } from '../schema-gate.ts';
import { DEFAULT_WORKSPACE, inWorkspace, WORKSPACE_HEADER, WORKSPACES_MIGRATION } from './context.ts';
import { createWorkspace, deleteWorkspace, getWorkspace, listWorkspaces, updateWorkspace, validateWorkspaceName } from './store.ts';

// MLflow 3's workspace endpoints (/api/3.0/mlflow/workspaces, and /ajax-api for the UI), and the middleware that
// puts every other call in the workspace its X-MLFLOW-WORKSPACE header names.

const CreateWorkspace = z.object({
  name: requiredStr(),
  description: optionalStr(),
  default_artifact_root: optionalStr(),
});
// An empty default_artifact_root clears it: absent and empty differ here.
const UpdateWorkspace = z.object({ description: str().optional(), default_artifact_root: str().optional() });

/** Whether the database has workspaces; a server facing an older schema serves the default workspace only. */
const schemaHasWorkspaces = async (deps: TrackerDeps) => !(await deps.schema.pending()).includes(WORKSPACES_MIGRATION);

const notUpgraded = () =>
  permissionDenied(`Workspaces need the database schema upgraded: run '${UPGRADE_COMMAND}' (this server is read-only until then).`);

export function workspaceRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  const access = workspaceAccess(deps);
  // every workspace endpoint reads tracker_workspaces, which an older schema lacks
  const upgraded = createMiddleware<AppEnv>(async (c, next) => {
    if (!(await schemaHasWorkspaces(deps))) throw notUpgraded();
    await next();
  });
  const named = (name: string) => {
    if (name !== DEFAULT_WORKSPACE) validateWorkspaceName(name);
    return name;
  };
  return new Hono<AppEnv>()
    .use('/workspaces', upgraded)
    .use('/workspaces/*', upgraded)
    .get('/workspaces', async (c) => {
      // the workspaces this caller may use (MLflow: "the workspaces visible to the current request context")
      const all = await listWorkspaces(db);
      const usable = await Promise.all(all.map(async (w) => (await access.decide(c, w.name, 'use')).allow));
      return c.json({ workspaces: all.filter((_, i) => usable[i]) });
    })
    .post('/workspaces', async (c) => {
      const req = await readRequest(c, CreateWorkspace);
      await access.require(c, req.name, 'manage');
      const workspace = await createWorkspace(db, req);
      return c.json({ workspace }, 201);
    })
    .get('/workspaces/:name', async (c) => {
      const name = named(c.req.param('name'));
      await access.require(c, name, 'use');
      return c.json({ workspace: await getWorkspace(db, name) });
    })
    .patch('/workspaces/:name', async (c) => {
      const name = named(c.req.param('name'));
      const req = await readRequest(c, UpdateWorkspace);
      await access.require(c, name, 'manage');
      return c.json({ workspace: await updateWorkspace(db, name, req) });
    })
    .delete('/workspaces/:name', async (c) => {
      const name = c.req.param('name');
      await access.require(c, name, 'manage');
      await deleteWorkspace(db, name, c.req.query('mode') ?? 'RESTRICT');
      return c.body(null, 204);
    });
}

/**
 * Resolves the request's workspace (MLflow's rules: the header trimmed, absent or empty is 'default'; a name that
 * does not exist is RESOURCE_DOES_NOT_EXIST, asked after the policy whether the caller may use it), then runs the rest
 * of the request in it. The workspace endpoints themselves and server-info are left alone, as MLflow leaves them.
 */
export function workspaceMiddleware(deps: TrackerDeps): MiddlewareHandler<AppEnv> {
  const access = workspaceAccess(deps);
  return createMiddleware<AppEnv>(async (c, next) => {
    const path = c.req.path;
    if (/^\/(api|ajax-api)\/3\.0\/mlflow\/(workspaces(\/|$)|server-info\/?$)/.test(path)) return next();
    const workspace = c.req.header(WORKSPACE_HEADER)?.trim() || DEFAULT_WORKSPACE;
    if (!(await schemaHasWorkspaces(deps))) {
      if (workspace !== DEFAULT_WORKSPACE) throw notUpgraded();
      return inWorkspace(workspace, next, false);
    }
    if (workspace !== DEFAULT_WORKSPACE) {
      validateWorkspaceName(workspace);
      // the policy first: a caller it refuses learns nothing of which workspaces exist
      await access.require(c, workspace, 'use');
      await getWorkspace(deps.db, workspace);
    }
    await inWorkspace(workspace, next);
  });
}
