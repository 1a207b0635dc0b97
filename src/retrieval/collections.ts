import { conflict, notFound } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import { decideCollection, requireAllowed, requireVisible } from './access.ts';
import type { RetrievalDeps } from './deps.ts';
import * as store from './store.ts';

export type CollectionInput = { slug: string; name: string; description?: string; allowed_roles: string[] };

export type CollectionView = {
  slug: string;
  name: string;
  description: string;
  allowed_roles: string[];
  document_count: number;
  chunk_count: number;
  created_by: string;
  created_at: string;
};

const view = (c: store.CollectionRow): CollectionView => ({
  slug: c.slug,
  name: c.name,
  description: c.description,
  allowed_roles: c.allowed_roles,
  document_count: c.document_count,
  chunk_count: c.chunk_count,
  created_by: c.created_by,
  created_at: c.created_at.toISOString(),
});

export async function createCollection(deps: RetrievalDeps, caller: Caller, input: CollectionInput): Promise<CollectionView> {
  const allowedRoles = [...new Set(input.allowed_roles)];
  await requireAllowed(deps.policy, caller, 'create', { slug: input.slug, allowed_roles: allowedRoles });
  const created = await store.insertCollection(deps.db, {
    slug: input.slug,
    name: input.name,
    description: input.description ?? '',
    allowed_roles: allowedRoles,
    created_by: caller.user,
  });
  if (!created) throw conflict(`A collection with slug '${input.slug}' already exists.`);
  return view((await store.findCollection(deps.db, input.slug))!);
}

/** Only the collections the policy lets the caller read. */
export async function listCollections(deps: RetrievalDeps, caller: Caller): Promise<CollectionView[]> {
  const all = await store.listCollections(deps.db);
  const decisions = await Promise.all(all.map((c) => decideCollection(deps.policy, caller, 'read', c)));
  return all.filter((_, i) => decisions[i]!.allow).map(view);
}

export async function getCollection(deps: RetrievalDeps, caller: Caller, slug: string): Promise<CollectionView> {
  return view(await requireVisible(deps.policy, caller, slug, await store.findCollection(deps.db, slug)));
}

/** Documents, chunks and embeddings go with it, in one statement (foreign keys cascade). */
export async function deleteCollection(deps: RetrievalDeps, caller: Caller, slug: string): Promise<{ deleted: string }> {
  const collection = await requireVisible(deps.policy, caller, slug, await store.findCollection(deps.db, slug));
  await requireAllowed(deps.policy, caller, 'delete', collection);
  if (!(await store.deleteCollection(deps.db, slug))) throw notFound(`Collection '${slug}' does not exist.`);
  deps.indexes.drop(slug);
  deps.keywords.drop(slug);
  return { deleted: slug };
}
