import type { Sql } from '../platform/db/index.ts';
import { badRequest, conflict, notFound } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import { decideCollection, requireAllowed, requireVisible } from './access.ts';
import { backendOf, createChunkStore, dropChunkStore, type BackendKind } from './backends/index.ts';
import type { RetrievalDeps } from './deps.ts';
import { deleteCollectionOriginals } from './originals.ts';
import * as store from './store.ts';
import { resolveWatchUri, WatchUriError } from './watch/roots.ts';
import * as watches from './watch/store.ts';

export type WatchInput = { uri: string; interval_seconds: number };
export type CollectionInput = {
  slug: string;
  name: string;
  description?: string;
  allowed_roles: string[];
  watch?: WatchInput | null | undefined;
  /** Where its chunks are kept; default SVC_RAG_DEFAULT_BACKEND. Fixed at creation. */
  backend?: BackendKind | undefined;
};
export type CollectionPatch = { name?: string; description?: string; allowed_roles?: string[]; watch?: WatchInput | null | undefined };

export type CollectionView = {
  slug: string;
  name: string;
  description: string;
  allowed_roles: string[];
  document_count: number;
  chunk_count: number;
  /** Bytes kept for its documents: the original files and the extracted text. */
  size_bytes: number;
  created_by: string;
  created_at: string;
  /** The watched source, or null; its scans are at GET /collections/{slug}/watch. */
  watch: WatchInput | null;
  backend: BackendKind;
};

const view = (c: store.CollectionRow, w: watches.WatchRow | undefined): CollectionView => ({
  slug: c.slug,
  name: c.name,
  description: c.description,
  allowed_roles: c.allowed_roles,
  document_count: c.document_count,
  chunk_count: c.chunk_count,
  size_bytes: c.size_bytes,
  created_by: c.created_by,
  created_at: c.created_at.toISOString(),
  watch: w ? { uri: w.uri, interval_seconds: w.interval_seconds } : null,
  backend: c.backend,
});

async function viewOf(deps: RetrievalDeps, slug: string): Promise<CollectionView> {
  const c = await store.findCollection(deps.db, slug);
  if (!c) throw notFound(`Collection '${slug}' does not exist.`);
  return view(c, await watches.findWatch(deps.db, slug));
}

/** A watch URI must lie under SVC_WATCH_ROOTS (folders by their real path): 400 naming the setting otherwise. */
async function checkWatch(deps: RetrievalDeps, watch: WatchInput): Promise<void> {
  try {
    await resolveWatchUri(watch.uri, deps.config.watch.roots);
  } catch (err) {
    if (err instanceof WatchUriError) throw badRequest(err.message, { errors: [{ location: 'json.watch.uri', message: err.message }] });
    throw err;
  }
}

export async function createCollection(deps: RetrievalDeps, caller: Caller, input: CollectionInput): Promise<CollectionView> {
  const allowedRoles = [...new Set(input.allowed_roles)];
  await requireAllowed(deps.policy, caller, 'create', { slug: input.slug, allowed_roles: allowedRoles });
  const watch = input.watch ?? undefined;
  if (watch) await checkWatch(deps, watch);
  const backend = input.backend ?? deps.config.RAG_DEFAULT_BACKEND;
  const taken = () => conflict(`A collection with slug '${input.slug}' already exists.`);
  // a lake table or a search index comes first (seconds on Trino), unless the slug is already taken
  if (backend !== 'memory' && (await store.collectionHead(deps.db, input.slug))) throw taken();
  const chunkStore = await createChunkStore(deps, input.slug, backend, input.backend);
  // the collection and its watch, or neither
  const created = await deps.db
    .transaction(async (tx) => {
      const inserted = await store.insertCollection(tx, {
        slug: input.slug,
        name: input.name,
        description: input.description ?? '',
        allowed_roles: allowedRoles,
        created_by: caller.user,
        backend,
        chunk_store: chunkStore,
      });
      if (inserted && watch) await watches.upsertWatch(tx, { slug: input.slug, ...watch, set_by: caller.user });
      return inserted;
    })
    .catch((err: unknown) => {
      if (chunkStore) void dropOrphan(deps, backend, chunkStore);
      throw err;
    });
  if (!created) {
    if (chunkStore) void dropOrphan(deps, backend, chunkStore);
    throw taken();
  }
  return viewOf(deps, input.slug);
}

/** Name, description, allowed roles and the watched source; `watch: null` stops watching (the documents stay). */
export async function updateCollection(deps: RetrievalDeps, caller: Caller, slug: string, patch: CollectionPatch): Promise<CollectionView> {
  const collection = await requireVisible(deps.policy, caller, slug, await store.findCollection(deps.db, slug));
  await requireAllowed(deps.policy, caller, 'update', collection);
  if (patch.watch) await checkWatch(deps, patch.watch);
  const allowedRoles = patch.allowed_roles && [...new Set(patch.allowed_roles)];
  await deps.db.transaction(async (tx) => {
    await updateCollectionRow(tx, slug, { ...patch, allowed_roles: allowedRoles });
    if (patch.watch === null) await watches.deleteWatch(tx, slug);
    else if (patch.watch) await watches.upsertWatch(tx, { slug, ...patch.watch, set_by: caller.user });
  });
  return viewOf(deps, slug);
}

/** Only the collections the policy lets the caller read. */
export async function listCollections(deps: RetrievalDeps, caller: Caller): Promise<CollectionView[]> {
  const all = await store.listCollections(deps.db);
  const decisions = await Promise.all(all.map((c) => decideCollection(deps.policy, caller, 'read', c)));
  const watched = new Map((await watches.listWatches(deps.db)).map((w) => [w.collection_slug, w]));
  return all.filter((_, i) => decisions[i]!.allow).map((c) => view(c, watched.get(c.slug)));
}

export async function getCollection(deps: RetrievalDeps, caller: Caller, slug: string): Promise<CollectionView> {
  const c = await requireVisible(deps.policy, caller, slug, await store.findCollection(deps.db, slug));
  return view(c, await watches.findWatch(deps.db, slug));
}

/** Documents, chunks, embeddings and the watch go with it, in one statement (foreign keys cascade); then the originals. */
export async function deleteCollection(deps: RetrievalDeps, caller: Caller, slug: string): Promise<{ deleted: string }> {
  const collection = await requireVisible(deps.policy, caller, slug, await store.findCollection(deps.db, slug));
  await requireAllowed(deps.policy, caller, 'delete', collection);
  if (!(await store.deleteCollection(deps.db, slug))) throw notFound(`Collection '${slug}' does not exist.`);
  // its chunk storage once its row is gone (a lake table or search index that cannot be dropped now is logged and left)
  try {
    await backendOf(deps, collection).drop();
  } catch (err) {
    deps.logger.warn(
      { err, event: 'retrieval.chunk_store_not_dropped', collection: slug, chunk_store: collection.chunk_store },
      'chunk store left behind',
    );
  }
  await deleteCollectionOriginals(deps, slug);
  return { deleted: slug };
}

/** A table or index no collection names (its create lost the slug, or its row could not be written). */
async function dropOrphan(deps: RetrievalDeps, backend: BackendKind, chunkStore: string): Promise<void> {
  await dropChunkStore(deps, backend, chunkStore).catch((err: unknown) => {
    deps.logger.warn({ err, event: 'retrieval.chunk_store_not_dropped', chunk_store: chunkStore }, 'chunk store left behind');
  });
}

/** What a patch names changes; what it leaves out stays. */
async function updateCollectionRow(
  sql: Sql,
  slug: string,
  p: { name?: string | undefined; description?: string | undefined; allowed_roles?: string[] | undefined },
) {
  await sql.query(
    `UPDATE retrieval_collections SET name = coalesce($2, name), description = coalesce($3, description),
       allowed_roles = CASE WHEN $4::jsonb IS NULL THEN allowed_roles ELSE ARRAY(SELECT jsonb_array_elements_text($4::jsonb)) END
     WHERE slug = $1`,
    [slug, p.name ?? null, p.description ?? null, p.allowed_roles ? JSON.stringify(p.allowed_roles) : null],
  );
}
