import { badRequest, unavailable } from '../../platform/errors.ts';
import type { RetrievalDeps } from '../deps.ts';
import type { CollectionHead } from '../store.ts';
import { createLakeTable, dropLakeTable, lakeBackend, type Lake } from './lake.ts';
import { memoryBackend } from './memory.ts';
import { createSearchIndex, dropSearchIndex, searchBackend, type Search } from './search.ts';
import type { BackendKind, ChunkBackend } from './types.ts';

// Where a collection's chunks are kept and how they are ranked, chosen per collection (its `backend` column): the
// memory backend (Postgres rows, ranked by the in-memory copy or pgvector), the lake (an Iceberg table written
// through Trino as the service and read as the caller) or the search backend (Postgres rows indexed in OpenSearch,
// which ranks them). Collections, documents, pages, originals and the audit stay in Postgres on all three; only what
// this object does differs. docs/retrieval.md, "Backends".

/** The backend of a collection; one on a service without its engine is a 503 naming the setting. */
export function backendOf(deps: RetrievalDeps, collection: CollectionHead): ChunkBackend {
  if (collection.backend === 'memory') return memoryBackend(deps, collection);
  if (collection.backend === 'search')
    return searchBackend(deps, requireSearch(deps, `Collection '${collection.slug}' is on the search backend`), collection);
  return lakeBackend(deps, requireLake(deps, `Collection '${collection.slug}' is on the lake`), collection);
}

const ENGINES = {
  lake: { name: 'the lake', setting: 'SVC_TRINO_URL', engine: 'Trino' },
  search: { name: 'the search backend', setting: 'SVC_OPENSEARCH_URL', engine: 'OpenSearch' },
} as const;

/**
 * A new collection's chunk store: the lake's table or the search backend's index (null on the memory backend).
 * A backend asked for by name that this service lacks is the request that cannot be met here (400); one it was
 * given by SVC_RAG_DEFAULT_BACKEND is the service's (503).
 */
export async function createChunkStore(
  deps: RetrievalDeps,
  slug: string,
  backend: BackendKind,
  asked: BackendKind | undefined,
): Promise<string | null> {
  if (backend === 'memory') return null;
  const { name, setting, engine } = ENGINES[backend];
  if (asked === backend && !(backend === 'lake' ? deps.lake : deps.search))
    throw badRequest(
      `This service has no ${engine} for ${name} (${setting} is not set), so collection '${slug}' cannot be created on it: ` +
        `create it with "backend": "memory", or ask the platform team to connect ${engine}.`,
    );
  const what = `Collection '${slug}' would be on ${name}`;
  return backend === 'lake' ? createLakeTable(requireLake(deps, what), slug) : createSearchIndex(requireSearch(deps, what), slug);
}

/** Drops a chunk store no collection row names (a create that lost its slug to another). */
export async function dropChunkStore(deps: RetrievalDeps, backend: BackendKind, store: string): Promise<void> {
  if (backend === 'lake') await dropLakeTable(requireLake(deps, 'A lake table is left over'), store);
  if (backend === 'search') await dropSearchIndex(requireSearch(deps, 'A search index is left over'), store);
}

export function requireLake(deps: RetrievalDeps, what: string): Lake {
  if (deps.lake) return deps.lake;
  throw unavailable(
    `${what}, and this service has no Trino to reach it: set SVC_TRINO_URL (and SVC_TRINO_SERVICE_TOKEN) for the lake backend.`,
  );
}

export function requireSearch(deps: RetrievalDeps, what: string): Search {
  if (deps.search) return deps.search;
  throw unavailable(`${what}, and this service has no OpenSearch to reach it: set SVC_OPENSEARCH_URL for the search backend.`);
}

export { BACKENDS, type BackendKind, type ChunkBackend, type DenseList } from './types.ts';
export { createLake, type Lake, type LakeSettings } from './lake.ts';
export { createSearch, SearchBackendError, type Search, type SearchSettings } from './search.ts';
