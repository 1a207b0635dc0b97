import type { Sql } from '../platform/db/index.ts';
import * as store from './store.ts';
import { createVectorIndex, type VectorIndex } from './vector-index/index.ts';

// In-memory copies of each collection's embeddings, used to rank exactly and fast. The database stays the truth:
// every use first reads the collection's version (one indexed row), and a copy whose version differs is rebuilt,
// so a replica never answers from vectors another replica has replaced.
type Entry = { version: number; index: VectorIndex | 'too-large' };

export type CollectionIndexes = {
  /**
   * The index for the collection at `version` (read by the caller in the same request), or 'too-large' when the
   * collection has more chunks than an in-memory copy may hold.
   */
  get(sql: Sql, slug: string, version: number): Promise<VectorIndex | 'too-large'>;
  /** After this process appended chunks and moved the version from `from` to `to`: extend the copy in place. */
  appended(slug: string, from: number, to: number, ids: string[], vectors: number[][]): void;
  drop(slug: string): void;
};

export function createCollectionIndexes(dim: number, maxChunks: number): CollectionIndexes {
  const entries = new Map<string, Entry>();
  const building = new Map<string, Promise<Entry>>();

  async function rebuild(sql: Sql, slug: string, version: number): Promise<Entry> {
    if ((await store.chunkCount(sql, slug)) > maxChunks) {
      const entry = { version, index: 'too-large' as const };
      entries.set(slug, entry);
      return entry;
    }
    const rows = await store.collectionEmbeddings(sql, slug);
    const index = await createVectorIndex(dim);
    index.add(
      rows.map((r) => r.id),
      rows.map((r) => parseVector(r.embedding)),
    );
    const entry = { version, index };
    entries.set(slug, entry);
    return entry;
  }

  return {
    async get(sql, slug, version) {
      const cached = entries.get(slug);
      if (cached?.version === version) return cached.index;
      const key = `${slug}@${version}`;
      let pending = building.get(key);
      if (!pending) {
        pending = rebuild(sql, slug, version).finally(() => building.delete(key));
        building.set(key, pending);
      }
      return (await pending).index;
    },
    appended(slug, from, to, ids, vectors) {
      const cached = entries.get(slug);
      if (!cached) return;
      if (cached.version !== from || cached.index === 'too-large') {
        entries.delete(slug);
        return;
      }
      cached.index.add(ids, vectors);
      cached.version = to;
    },
    drop(slug) {
      entries.delete(slug);
    },
  };
}

/** pgvector's binary form: int16 dimension, int16 unused, then the values as big-endian float4. */
function parseVector(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dim = view.getInt16(0);
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = view.getFloat32(4 + 4 * i);
  return v;
}
