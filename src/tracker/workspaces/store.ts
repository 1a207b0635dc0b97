import { isUniqueViolation, type Database, type Sql } from '../../platform/db/index.ts';
import { alreadyExists, doesNotExist, invalidParameter, invalidState } from '../errors.ts';
import { DEFAULT_WORKSPACE } from './context.ts';

// Workspace rows, in MLflow's words: names are Kubernetes-style (its WorkspaceNameValidator), 'default' is reserved
// and always exists, and a workspace is deleted only when nothing is left in it (MLflow's RESTRICT mode; CASCADE
// and SET_DEFAULT are refused as not supported).

export type Workspace = { name: string; description?: string; default_artifact_root?: string };
type WorkspaceRow = { name: string; description: string | null; default_artifact_root: string | null };

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const RESERVED = new Set(['workspaces', 'api', 'ajax-api', 'static-files']);

/** MLflow's validation of a workspace name, with its messages. */
export function validateWorkspaceName(name: string): void {
  if (name.length < 2 || name.length > 63) {
    throw invalidParameter(`Workspace name '${name}' must be between 2 and 63 characters.`);
  }
  if (!NAME.test(name)) {
    throw invalidParameter(
      `Workspace name '${name}' must match the pattern ${NAME.source} (lowercase alphanumeric with optional internal hyphens).`,
    );
  }
  if (RESERVED.has(name)) throw invalidParameter(`Workspace name '${name}' is reserved and cannot be used.`);
}

const workspaceJson = (row: WorkspaceRow): Workspace => ({
  name: row.name,
  ...(row.description === null ? {} : { description: row.description }),
  ...(row.default_artifact_root === null ? {} : { default_artifact_root: row.default_artifact_root }),
});

export async function listWorkspaces(db: Sql): Promise<Workspace[]> {
  const rows = await db.query<WorkspaceRow>(`SELECT name, description, default_artifact_root FROM tracker_workspaces ORDER BY name`);
  return rows.map(workspaceJson);
}

export async function getWorkspace(db: Sql, name: string): Promise<Workspace> {
  const [row] = await db.query<WorkspaceRow>(`SELECT name, description, default_artifact_root FROM tracker_workspaces WHERE name = $1`, [
    name,
  ]);
  if (!row) throw doesNotExist(`Workspace '${name}' not found`);
  return workspaceJson(row);
}

export async function createWorkspace(db: Sql, input: Workspace): Promise<Workspace> {
  if (input.name === DEFAULT_WORKSPACE) {
    throw invalidParameter(`The '${DEFAULT_WORKSPACE}' workspace is reserved and cannot be created`);
  }
  validateWorkspaceName(input.name);
  try {
    const [row] = await db.query<WorkspaceRow>(
      `INSERT INTO tracker_workspaces (name, description, default_artifact_root) VALUES ($1, $2, $3)
       RETURNING name, description, default_artifact_root`,
      [input.name, input.description ?? null, input.default_artifact_root || null],
    );
    return workspaceJson(row!);
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyExists(`Workspace '${input.name}' already exists.`);
    throw err;
  }
}

/** Changes the fields given; an empty artifact root clears it (MLflow's rule). */
export async function updateWorkspace(
  db: Sql,
  name: string,
  input: { description?: string | undefined; default_artifact_root?: string | undefined },
): Promise<Workspace> {
  if (input.description === undefined && input.default_artifact_root === undefined) {
    throw invalidParameter('Workspace update must have at least one key');
  }
  const [row] = await db.query<WorkspaceRow>(
    `UPDATE tracker_workspaces SET
       description = CASE WHEN $2::boolean THEN $3 ELSE description END,
       default_artifact_root = CASE WHEN $4::boolean THEN nullif($5, '') ELSE default_artifact_root END
     WHERE name = $1 RETURNING name, description, default_artifact_root`,
    [
      name,
      input.description !== undefined,
      input.description ?? null,
      input.default_artifact_root !== undefined,
      input.default_artifact_root ?? null,
    ],
  );
  if (!row) throw doesNotExist(`Workspace '${name}' not found`);
  return workspaceJson(row);
}

const ROOTS = [
  ['tracker_experiments', 'experiments'],
  ['tracker_registered_models', 'registered_models'],
  ['tracker_evaluation_datasets', 'evaluation_datasets'],
] as const;

export async function deleteWorkspace(db: Database, name: string, mode: string): Promise<void> {
  if (name === DEFAULT_WORKSPACE) {
    throw invalidParameter(`The '${DEFAULT_WORKSPACE}' workspace is reserved and cannot be deleted`);
  }
  validateWorkspaceName(name);
  if (!['RESTRICT', 'CASCADE', 'SET_DEFAULT'].includes(mode)) {
    throw invalidParameter(`Invalid deletion mode '${mode}'. Must be one of: SET_DEFAULT, CASCADE, RESTRICT`);
  }
  if (mode !== 'RESTRICT') throw invalidParameter(`Workspace deletion mode '${mode}' is not supported by this server; use RESTRICT.`);
  await db.transaction(async (tx) => {
    await getWorkspace(tx, name);
    for (const [table, label] of ROOTS) {
      const [row] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE workspace = $1`, [name]);
      if (Number(row!.n) > 0) {
        throw invalidState(
          `Cannot delete workspace '${name}': table '${label}' still contains ${row!.n} resource(s). Remove or reassign them before deleting the workspace.`,
        );
      }
    }
    await tx.query(`DELETE FROM tracker_workspaces WHERE name = $1`, [name]);
  });
}
