import type { Database } from '../platform/db/index.ts';
import * as store from './store.ts';
import { createStoredIndex, type StoredIndex } from './vector-index/index.ts';

// In-memory copies of each collection's embeddings, used to rank exactly and fast. The database stays the truth:
// every use first reads the collection's version (one indexed row), and a copy whose version differs catches up.
// Catching up reads only the chunks stored after the copy's last one, when the collection's chunk count and the
// sum of its chunk sequence numbers show that nothing else changed (no deletion, no insert committed out of
// sequence order); otherwise the copy is rebuilt. So an upload through any replica costs the others the new rows
// only, and a replica never answers from vectors another replica has removed.
// A copy holds the int8 row codes that ingestion stores beside each chunk, read with binary COPY; the float rows
// for the exact re-rank are read from the database per query, a few at a time (vector-index/stored.ts).
type Copy = { index: StoredIndex; rows: number; lastSeq: number; seqSum: number };
type Entry = { version: number; copy: Copy | 'too-large' };

export type RankedChunk = store.ChunkHit & { score: number };
export type RankedId = { id: string; score: number };

export type CollectionIndexes = {
  /**
   * The exact top `k` chunks of the collection at `version` (read by the caller in the same request) by cosine
   * similarity to `vector`, best first; 'too-large' when the collection has more chunks than a copy may hold.
   */
  rank(db: Database, slug: string, version: number, vector: readonly number[], k: number): Promise<RankedChunk[] | 'too-large'>;
  /**
   * The same ranking as `rank`, read back without the chunks' text and documents: for a list fused with another
   * before its few winners are read (hybrid), where the text of every candidate would be read for nothing.
   */
  rankIds(db: Database, slug: string, version: number, vector: readonly number[], k: number): Promise<RankedId[] | 'too-large'>;
  drop(slug: string): void;
  /** Bytes the collection's copy holds (0 when there is none). */
  bytes(slug: string): number;
};

export function createCollectionIndexes(dim: number, maxChunks: number): CollectionIndexes {
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<Entry>>();

  async function catchUp(db: Database, slug: string, version: number, held: Copy | 'too-large' | undefined): Promise<Entry> {
    const tooLarge = () => remember(slug, { version, copy: 'too-large' });
    if (held === 'too-large') {
      // still too large, most likely: a count is cheaper than reading past the limit again
      if ((await store.chunkCount(db, slug)) > maxChunks) return tooLarge();
    } else if (held) {
      const delta = await store.readCodesAfter(db, slug, held.lastSeq);
      if (delta.total > maxChunks) return tooLarge();
      const added = delta.rows;
      const unchanged = delta.total === held.rows + added.length && delta.seqSum === held.seqSum + added.reduce((s, r) => s + r.seq, 0);
      if (unchanged) {
        held.index.reserve(delta.total);
        for (const row of added) append(held, row);
        return remember(slug, { version, copy: held });
      }
    }
    // one read past the limit tells a collection too large for a copy, without counting it first
    const copy: Copy = { index: await createStoredIndex(dim), rows: 0, lastSeq: 0, seqSum: 0 };
    const read = await store.readAllCodes(db, slug, maxChunks + 1, (row) => append(copy, row));
    return read.total > maxChunks ? tooLarge() : remember(slug, { version, copy });
  }

  const remember = (slug: string, entry: Entry) => (entries.set(slug, entry), entry);

  async function copyAt(db: Database, slug: string, version: number): Promise<Entry> {
    const held = entries.get(slug);
    if (held?.version === version) return held;
    // One catch-up at a time per collection; callers asking for the same version share it.
    const key = `${slug}@${version}`;
    let running = pending.get(key);
    if (!running) {
      running = catchUp(db, slug, version, held?.copy).finally(() => pending.delete(key));
      pending.set(key, running);
    }
    return running;
  }

  async function search<T>(
    db: Database,
    slug: string,
    version: number,
    vector: readonly number[],
    k: number,
    fetch: (seqs: number[]) => Promise<{ seq: number; vector: Float32Array; item: T }[]>,
  ): Promise<(T & { score: number })[] | 'too-large'> {
    const { copy } = await copyAt(db, slug, version);
    if (copy === 'too-large') return 'too-large';
    const hits = await copy.index.search(vector, k, fetch);
    return hits.map((h) => ({ ...h.item, score: h.score }));
  }

  return {
    rank: (db, slug, version, vector, k) =>
      search(db, slug, version, vector, k, async (seqs) =>
        (await store.chunksBySeq(db, slug, seqs)).map(({ seq, vector: stored, ...chunk }) => ({ seq, vector: stored, item: chunk })),
      ),
    rankIds: (db, slug, version, vector, k) =>
      search(db, slug, version, vector, k, async (seqs) =>
        (await store.vectorsBySeq(db, slug, seqs)).map(({ seq, id, vector: stored }) => ({ seq, vector: stored, item: { id } })),
      ),
    drop(slug) {
      entries.delete(slug);
    },
    bytes(slug) {
      const copy = entries.get(slug)?.copy;
      return copy && copy !== 'too-large' ? copy.index.bytes : 0;
    },
  };
}

function append(copy: Copy, row: store.StoredRow): void {
  if (row.code) copy.index.addCode(row.seq, row.code);
  else if (row.vector) copy.index.addVector(row.seq, row.vector);
  else throw new Error(`chunk ${row.seq} has neither a code nor a vector`);
  copy.rows += 1;
  copy.lastSeq = row.seq;
  copy.seqSum += row.seq;
}
