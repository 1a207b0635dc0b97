import type { Sql } from '../platform/db/index.ts';
import * as store from './store.ts';
import { createVectorIndex, type VectorIndex } from './vector-index/index.ts';

// In-memory copies of each collection's embeddings, used to rank exactly and fast. The database stays the truth:
// every use first reads the collection's version (one indexed row), and a copy whose version differs catches up.
// Catching up reads only the chunks stored after the copy's last one, when the collection's chunk count and the
// sum of its chunk sequence numbers show that nothing else changed (no deletion, no insert committed out of
// sequence order); otherwise the copy is rebuilt. So an upload through any replica costs the others the new rows
// only, and a replica never answers from vectors another replica has removed.
type Copy = { index: VectorIndex; rows: number; lastSeq: number; seqSum: number };
type Entry = { version: number; copy: Copy | 'too-large' };

export type CollectionIndexes = {
  /**
   * The index for the collection at `version` (read by the caller in the same request), or 'too-large' when the
   * collection has more chunks than an in-memory copy may hold.
   */
  get(sql: Sql, slug: string, version: number): Promise<VectorIndex | 'too-large'>;
  drop(slug: string): void;
};

export function createCollectionIndexes(dim: number, maxChunks: number): CollectionIndexes {
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<Entry>>();

  async function catchUp(sql: Sql, slug: string, version: number, held: Copy | undefined): Promise<Entry> {
    if (held) {
      const delta = await store.embeddingsAfter(sql, slug, held.lastSeq);
      const added = delta.rows;
      const unchanged = delta.total === held.rows + added.length && delta.seqSum === held.seqSum + added.reduce((s, r) => s + r.seq, 0);
      if (unchanged && delta.total <= maxChunks) {
        append(held, added);
        return remember(slug, { version, copy: held });
      }
    }
    if ((await store.chunkCount(sql, slug)) > maxChunks) return remember(slug, { version, copy: 'too-large' });
    const all = await store.embeddingsAfter(sql, slug, 0);
    const copy: Copy = { index: await createVectorIndex(dim), rows: 0, lastSeq: 0, seqSum: 0 };
    append(copy, all.rows);
    return remember(slug, { version, copy });
  }

  const remember = (slug: string, entry: Entry) => (entries.set(slug, entry), entry);

  return {
    async get(sql, slug, version) {
      const held = entries.get(slug);
      if (held?.version === version) return index(held);
      // One catch-up at a time per collection; callers asking for the same version share it.
      const key = `${slug}@${version}`;
      let running = pending.get(key);
      if (!running) {
        const copy = held && held.copy !== 'too-large' ? held.copy : undefined;
        running = catchUp(sql, slug, version, copy).finally(() => pending.delete(key));
        pending.set(key, running);
      }
      return index(await running);
    },
    drop(slug) {
      entries.delete(slug);
    },
  };
}

const index = (entry: Entry) => (entry.copy === 'too-large' ? 'too-large' : entry.copy.index);

function append(copy: Copy, rows: { seq: number; id: string; embedding: Uint8Array }[]): void {
  if (rows.length === 0) return;
  copy.index.add(
    rows.map((r) => r.id),
    rows.map((r) => parseVector(r.embedding)),
  );
  copy.rows += rows.length;
  copy.lastSeq = rows[rows.length - 1]!.seq;
  for (const r of rows) copy.seqSum += r.seq;
}

/** pgvector's binary form: int16 dimension, int16 unused, then the values as big-endian float4. */
function parseVector(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dim = view.getInt16(0);
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = view.getFloat32(4 + 4 * i);
  return v;
}
