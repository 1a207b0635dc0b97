import { unavailable } from '../../platform/errors.ts';
import type { RetrievalDeps } from '../deps.ts';
import type { CollectionHead } from '../store.ts';
import { lakeBackend, type Lake } from './lake.ts';
import { memoryBackend } from './memory.ts';
import type { ChunkBackend } from './types.ts';

// Where a collection's chunks are kept and how they are ranked, chosen per collection (its `backend` column): the
// memory backend (Postgres rows, ranked by the in-memory copy or pgvector) or the lake (an Iceberg table written
// through Trino as the service and read as the caller). Collections, documents, pages, originals and the audit stay
// in Postgres on both; only what this object does differs. docs/retrieval.md, "Backends".

/** The backend of a collection; a lake collection on a service without Trino is a 503 naming the setting. */
export function backendOf(deps: RetrievalDeps, collection: CollectionHead): ChunkBackend {
  if (collection.backend === 'memory') return memoryBackend(deps, collection);
  return lakeBackend(deps, requireLake(deps, `Collection '${collection.slug}' is on the lake`), collection);
}

export function requireLake(deps: RetrievalDeps, what: string): Lake {
  if (deps.lake) return deps.lake;
  throw unavailable(
    `${what}, and this service has no Trino to reach it: set SVC_TRINO_URL (and SVC_TRINO_SERVICE_TOKEN) for the lake backend.`,
  );
}

export { BACKENDS, type BackendKind, type ChunkBackend, type DenseList } from './types.ts';
export { createLake, createLakeTable, dropLakeTable, type Lake, type LakeSettings } from './lake.ts';
