import { Hono } from 'hono';
import { z } from 'zod';
import type { Sql } from '../../platform/db/index.ts';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { doesNotExist } from '../errors.ts';
import { optionalStr, requiredStr, runMessage } from '../wire/fields.ts';
import { invalidParameter } from '../errors.ts';
import { readQuery, readRequest } from '../wire/request.ts';
import { listArtifacts, uploadArtifact } from './files.ts';
import { sendArtifact } from './http.ts';
import { artifactPathField, checkArtifactPath, joinKey } from './paths.ts';
import { experimentInWorkspace, requestWorkspace } from '../workspaces/sql.ts';
import { requireStoreKey, storeKeyOf } from './store-keys.ts';

export const ListArtifacts = runMessage({ path: artifactPathField(), page_token: optionalStr() });
const GetArtifact = runMessage({ path: requiredStr().transform((p) => checkArtifactPath(p)) });

// The UI's upload of one file into a run (MLflow's ajax upload-artifact): the run and path in the query string,
// the file as the body, at most 10 MiB; refusals in MLflow's words.
const MAX_UI_UPLOAD = 10 * 1024 * 1024;
const UploadArtifact = z.object({ run_uuid: optionalStr(), run_id: optionalStr(), path: optionalStr() }).transform((m) => {
  const runId = m.run_uuid ?? m.run_id;
  if (!runId) throw invalidParameter('Request must specify run_uuid.');
  if (!m.path) throw invalidParameter('Request must specify path.');
  return { runId, path: checkArtifactPath(m.path) };
});
const tooLarge = () => invalidParameter('Artifact size is too large. Max size is 10MB.');

/** The body, refused as soon as it passes `max` bytes (a body without a length is counted as it arrives). */
async function bodyUpTo(body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (body) {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > max) throw tooLarge();
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks);
}

/** GET /get-artifact: a run's file; MLflow serves it under the API prefixes and at the root, where its UI asks. */
export function runFileRoutes(deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>().get('/get-artifact', async (c) => {
    const m = await readRequest(c, GetArtifact);
    const artifactUri = await runArtifactUri(deps.db, m.run_id);
    return sendArtifact(c, deps.artifacts, joinKey(requireStoreKey(deps, artifactUri), m.path), m.path);
  });
}

/**
 * Run artifacts by run id, for the client's list_artifacts and the UI's artifact browser, paths relative to the
 * API prefix: GET /artifacts/list (MLflow's ListArtifacts), GET /get-artifact and POST /upload-artifact.
 */
export function runArtifactRoutes(deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .route('/', runFileRoutes(deps))
    .post('/upload-artifact', async (c) => {
      const m = readQuery(c, UploadArtifact);
      const length = Number(c.req.header('content-length') ?? '0');
      if (length > MAX_UI_UPLOAD) throw tooLarge();
      const data = await bodyUpTo(c.req.raw.body, MAX_UI_UPLOAD);
      if (data.byteLength === 0) throw invalidParameter('Request must specify data.');
      const root = requireStoreKey(deps, await runArtifactUri(deps.db, m.runId));
      await uploadArtifact(deps.artifacts, joinKey(root, m.path), data, { contentLength: data.byteLength });
      return c.json({});
    })
    .get('/artifacts/list', async (c) => c.json(await listRunArtifacts(deps, await readRequest(c, ListArtifacts))));
}

/** MLflow's ListArtifacts answer: a run folder's direct children, paths relative to the run's artifact root. */
export async function listRunArtifacts(deps: TrackerDeps, m: z.output<typeof ListArtifacts>) {
  const artifactUri = await runArtifactUri(deps.db, m.run_id);
  const root = storeKeyOf(deps, artifactUri);
  // A run whose artifacts live outside this server's store (set by hand to another location) lists as empty.
  const files = root === null ? [] : await listArtifacts(deps.artifacts, joinKey(root, m.path));
  return {
    root_uri: artifactUri,
    ...(files.length ? { files: files.map((f) => ({ ...f, path: m.path ? `${m.path}/${f.path}` : f.path })) } : {}),
  };
}

async function runArtifactUri(db: Sql, runId: string): Promise<string> {
  const rows = await db.query<{ artifact_uri: string }>(
    `SELECT artifact_uri FROM tracker_runs WHERE run_id = $1 AND ${experimentInWorkspace('experiment_id', '$2')}`,
    [runId, requestWorkspace()],
  );
  if (!rows[0]) throw doesNotExist(`Run with id=${runId} not found`);
  return rows[0].artifact_uri;
}
