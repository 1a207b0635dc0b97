import { posix } from 'node:path';
import type { Sql } from '../../platform/db/index.ts';
import { checkArtifactPath, isWithin, keyOfProxiedUri } from '../artifacts/paths.ts';
import { doesNotExist, invalidParameter } from '../errors.ts';
import { experimentInWorkspace, modelInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { canonicalStage, parseVersion } from './validate.ts';

export type VersionSource = {
  /** What the version reports as its source (a models:/ reference made concrete, else as sent). */
  source: string;
  /** Where its files are: what get-download-uri answers, so `models:/name/1` loads through the artifact proxy. */
  storageLocation: string;
  runId: string | null;
  modelId: string | null;
};

type Input = { source: string; runId?: string | undefined; modelId?: string | undefined };

// The sources the 3.x client sends: `models:/<model_id>` (a logged model), `runs:/<run_id>/<path>`, a concrete
// location inside the run's or logged model's artifacts (`mlflow-artifacts:/...`), or `models:/<name>/<version>`
// (a copy of another version). As MLflow's server does, a source that names a run or a logged model must match the
// run_id/model_id sent with it, so a version cannot claim another run's files. A `runs:/` source is not looked up
// (MLflow's rule: a migration registers versions whose runs live on another server); when the run is here, its
// files are the run's artifacts behind the proxy. A concrete proxied location must lie inside the run's or logged
// model's artifacts named with it.
export async function resolveSource(db: Sql, input: Input): Promise<VersionSource> {
  const { source } = input;
  const runId = input.runId || null;
  const modelId = input.modelId || null;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(source)?.[1]?.toLowerCase();
  if (!scheme || scheme === 'file' || /^[a-z]$/.test(scheme)) return localSource(db, source, runId, modelId);
  checkNoRelativeParts(source);
  const invalid = (field: 'run_id' | 'model_id') =>
    invalidParameter(
      `Invalid model version source: '${source}'. The ${field} request parameter must identify the resource that contains the source.`,
    );

  if (scheme === 'models') {
    const ref = parseModelsUri(source);
    if ('modelId' in ref) {
      if (modelId && modelId !== ref.modelId) throw invalid('model_id');
      const model = await loggedModel(db, ref.modelId);
      if (!model) throw invalid('model_id');
      return { source, storageLocation: model.artifact_location, runId: runId ?? model.source_run_id, modelId: ref.modelId };
    }
    const target = await referencedVersion(db, ref);
    if ((runId && runId !== (target.run_id ?? '')) || (modelId && modelId !== (target.model_id ?? ''))) {
      throw invalidParameter(
        `Invalid model version source: '${source}'. The run_id and model_id request parameters must match the referenced model version.`,
      );
    }
    return {
      source: `models:/${target.name}/${target.version}`,
      storageLocation: target.storage_location ?? target.source,
      runId: runId ?? target.run_id,
      modelId: modelId ?? target.model_id,
    };
  }

  if (scheme === 'runs') {
    const m = /^runs:\/([^/]+)(?:\/(.*))?$/.exec(source);
    if (!m) throw invalidParameter(`Invalid model version source: '${source}'. Expected runs:/<run_id>/<artifact path>.`);
    const sourceRun = m[1]!;
    if (modelId || (runId && runId !== sourceRun)) throw invalid(modelId ? 'model_id' : 'run_id');
    const rel = checkArtifactPath(m[2] ?? '');
    const run = await runArtifactUri(db, sourceRun);
    const storageLocation = run === null ? source : rel ? `${run.replace(/\/+$/, '')}/${rel}` : run;
    return { source, storageLocation, runId: sourceRun, modelId: null };
  }

  if (scheme === 'mlflow-artifacts') {
    const key = keyOfProxiedUri(source)!;
    if (modelId) {
      const model = await loggedModel(db, modelId);
      const root = model && keyOfProxiedUri(model.artifact_location);
      if (root === null || root === undefined || !isWithin(key, root)) throw invalid('model_id');
      return { source, storageLocation: source, runId: runId ?? model!.source_run_id, modelId };
    }
    const run = runId ? await runArtifactUri(db, runId) : null;
    const root = run === null ? null : keyOfProxiedUri(run);
    if (root === null || !isWithin(key, root)) throw invalid('run_id');
    return { source, storageLocation: source, runId, modelId: null };
  }

  // Another store (s3://, gs://, ...): the client reads it directly with its own credentials.
  return { source, storageLocation: source, runId, modelId };
}

type ModelsRef = { modelId: string } | { name: string; version?: number; stage?: string; alias?: string };

function parseModelsUri(uri: string): ModelsRef {
  const bad = () =>
    invalidParameter(
      `Not a proper models:/ URI: ${uri}. Models URIs must be of the form 'models:/name/suffix' or 'models:/name@alias' where suffix is a version, stage, or the string 'latest'.`,
    );
  const m = /^models:(\/\/[^/]*)?\/(.*)$/i.exec(uri);
  if (!m || m[1]) throw bad(); // a host (another registry) is not this registry
  const parts = m[2]!.split('/');
  if (parts.length > 2 || !parts[0]!.trim()) throw bad();
  if (parts.length === 2) {
    const [name, suffix] = parts as [string, string];
    if (!suffix.trim()) throw bad();
    if (/^\d+$/.test(suffix)) return { name, version: parseVersion(suffix) };
    if (suffix.toLowerCase() === 'latest') return { name };
    return { name, stage: canonicalStage(suffix) };
  }
  const at = parts[0]!.lastIndexOf('@');
  if (at >= 0) {
    const alias = parts[0]!.slice(at + 1);
    if (!alias.trim()) throw bad();
    return { name: parts[0]!.slice(0, at), alias };
  }
  return { modelId: parts[0]! };
}

type SourceVersion = {
  name: string;
  version: number;
  source: string;
  storage_location: string | null;
  run_id: string | null;
  model_id: string | null;
};

async function referencedVersion(db: Sql, ref: { name: string; version?: number; stage?: string; alias?: string }): Promise<SourceVersion> {
  const cols = `v.name, v.version, v.source, v.storage_location, v.run_id, v.model_id`;
  let rows: SourceVersion[];
  if (ref.alias !== undefined) {
    rows = await db.query<SourceVersion>(
      `SELECT ${cols} FROM tracker_model_versions v JOIN tracker_registered_model_aliases a USING (name, version)
        WHERE a.name = $1 AND a.alias = $2 AND NOT v.deleted AND ${modelInWorkspace('v.name', '$3')}`,
      [ref.name, ref.alias, requestWorkspace()],
    );
  } else {
    rows = await db.query<SourceVersion>(
      `SELECT ${cols} FROM tracker_model_versions v
        WHERE v.name = $1 AND NOT v.deleted AND ($2::int IS NULL OR v.version = $2) AND ($3::text IS NULL OR v.current_stage = $3)
          AND ${modelInWorkspace('v.name', '$4')}
        ORDER BY v.version DESC LIMIT 1`,
      [ref.name, ref.version ?? null, ref.stage ?? null, requestWorkspace()],
    );
  }
  const found = rows[0];
  if (!found)
    throw doesNotExist(
      `Model version for source models:/${ref.name}${ref.alias ? `@${ref.alias}` : `/${ref.version ?? ref.stage ?? 'latest'}`} not found`,
    );
  return found;
}

async function loggedModel(db: Sql, modelId: string) {
  const rows = await db.query<{ artifact_location: string; source_run_id: string | null }>(
    `SELECT artifact_location, source_run_id FROM tracker_logged_models WHERE model_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}`,
    [modelId, requestWorkspace()],
  );
  return rows[0] ?? null;
}

async function runArtifactUri(db: Sql, runId: string): Promise<string | null> {
  const rows = await db.query<{ artifact_uri: string }>(
    `SELECT artifact_uri FROM tracker_runs WHERE run_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}`,
    [runId, requestWorkspace()],
  );
  return rows[0]?.artifact_uri ?? null;
}

// '..' anywhere in the path part of a source (also encoded) could walk out of the run's artifacts.
function checkNoRelativeParts(source: string): void {
  let s = source;
  for (let i = 0; i < 5; i++) {
    if (s.split(/[/\\]/).some((seg) => seg === '..')) {
      throw invalidParameter(`Invalid model version source: '${source}'. Relative path segments ('..') are not allowed.`);
    }
    let next: string;
    try {
      next = decodeURIComponent(s);
    } catch {
      return;
    }
    if (next === s) return;
    s = next;
  }
}

/** The absolute local path a `file:` URI (without a host) or a bare path names; null for anything else. */
function localPath(uri: string): string | null {
  const m = /^file:(?:\/\/([^/]*))?(\/.*)$/i.exec(uri);
  if (m) return m[1] ? null : posix.normalize(decodeURIComponent(m[2]!)).replace(/(.)\/+$/, '$1');
  return uri.startsWith('/') ? posix.normalize(uri).replace(/(.)\/+$/, '$1') : null;
}

/**
 * A local path (or `file:` URI) as a source, MLflow's rule: only inside the local artifact folder of the run named
 * with it (a server whose runs keep their artifacts in a `file://` root). Anything else on the server's disk is
 * refused, so a version cannot expose the server's files.
 */
async function localSource(db: Sql, source: string, runId: string | null, modelId: string | null): Promise<VersionSource> {
  // With a model_id the source must lie in the logged model's folder, else in the run's (MLflow's two rules).
  const field = modelId ? 'model_id' : 'run_id';
  const refused = () =>
    invalidParameter(
      `Invalid model version source: '${source}'. To use a local path as a model version source, the ${field} request parameter ` +
        `has to be specified and the local path has to be contained within the artifact directory of the run specified by the ${field}.`,
    );
  let folder: string;
  let versionRun = runId;
  if (modelId) {
    const model = await loggedModel(db, modelId);
    if (!model) throw doesNotExist(`Logged model with ID '${modelId}' not found.`);
    folder = model.artifact_location;
    versionRun ??= model.source_run_id;
  } else {
    if (!runId) throw refused();
    const runUri = await runArtifactUri(db, runId);
    if (runUri === null) throw doesNotExist(`Run with id=${runId} not found`);
    folder = runUri;
  }
  const [path, dir] = [localPath(source), localPath(folder)];
  if (path === null || dir === null || !(path === dir || path.startsWith(`${dir}/`))) throw refused();
  return { source, storageLocation: source, runId: versionRun, modelId };
}
