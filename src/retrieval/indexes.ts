import type { Database } from '../platform/db/index.ts';
import type { Logger } from '../platform/log.ts';
import * as store from './store.ts';
import { createStoredIndex, type Pruning, type StoredIndex } from './vector-index/index.ts';
import { kernelModule } from './vector-index/kernel.ts';
import { SPLIT_FROM_ROWS } from './vector-index/rows.ts';
import { splitThreads, startSplitWorkers } from './vector-index/split.ts';
import { createVectorSpill, type VectorSpill } from './vector-spill.ts';

// In-memory copies of each collection's embeddings, used to rank exactly and fast. The database stays the truth:
// every use first reads the collection's version (one indexed row), and a copy whose version differs catches up.
// Catching up reads only the chunks stored after the copy's last one, when the collection's chunk count and the
// sum of its chunk sequence numbers show that nothing else changed (no deletion, no insert committed out of
// sequence order); otherwise the copy is rebuilt. So an upload through any replica costs the others the new rows
// only, and a replica never answers from vectors another replica has removed.
// A copy holds the int8 row codes that ingestion stores beside each chunk, read with binary COPY; the float rows
// for the exact re-rank are read from the database per query, a few at a time and without text
// (vector-index/stored.ts). The rows the re-rank reads (dense and hybrid) are kept on the copy while one process-wide
// budget lasts: a chunk's vector never changes (a replaced chunk gets a new sequence number), and the copy asks only for rows it holds, so a kept row is always
// the one the database held at the copy's version. A copy rebuilt or dropped gives its bytes back. A copy whose
// every row fits what is left of the budget reads them all in the background once it is built (warmUp), so even a
// question never asked before re-ranks from memory; until then, and for larger copies, the re-rank reads as above.
// A copy of SVC_RAG_PRUNING_FROM_CHUNKS chunks or more builds its clusters on a worker thread once loaded, and again
// when enough rows are appended (vector-index/background-build.ts), started once the question that loaded the rows
// is answered: that question does not wait for it nor share the cores with it, and searches scan every row until
// the clusters are swapped in. A copy replaced or dropped stops its build.
// A copy too large to keep its floats whole but with clusters built reads every vector once more, in the background,
// into the clusters' finer code (vector-index/refine.ts, about 400 bytes a row counted against the same budget,
// taken when the copy loads): a question never asked before then reads back about 13 candidates instead of about 70.
// That read also writes each vector and chunk id to a local file (vector-spill.ts, unlinked once open), from which a
// search then takes its candidates' vectors instead of asking the database (1.5 ms of a new question's 4.5, at
// 100 000 clustered rows): a few microseconds a row from the page cache, in no process's resident memory.
type Floats = Map<number, { vector: Float32Array; id: string }>;
/** `prepareDue`: rows were loaded or appended; the search that waited for them starts the clusters' build once answered. */
type Copy = {
  index: StoredIndex;
  rows: number;
  lastSeq: number;
  seqSum: number;
  floats: Floats | undefined;
  floatBytes: number;
  /** Bytes of the budget the clusters' finer code holds (refine()), 0 when it has none. */
  refineBytes: number;
  /** The rows' vectors and ids on local disk, written by the finer code's read (vector-spill.ts). */
  spill: VectorSpill | undefined;
  prepareDue: boolean;
};
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
  /** Bytes the collection's copy holds (0 when there is none), without its kept float rows. */
  bytes(slug: string): number;
  /** Bytes of float rows kept across collections, counted against SVC_RAG_FLOAT_CACHE_BYTES. */
  floatBytes(): number;
  /** The clusters of the collection's copy (vector-index/clusters.ts), when it has a copy. */
  pruning(slug: string): Pruning | undefined;
  /**
   * A bare read of the copy's rows on the threads its full scan uses, nothing computed (false when there is no copy):
   * the floor a benchmark sets a full scan against, on the very bytes the scan reads.
   */
  readAll(slug: string): boolean;
};

// a kept row's Map entry, its object and its id, roughly, beside the vector's own dim * 4 bytes
const FLOAT_ROW_OVERHEAD = 160;
/** Rows a warm-up reads per statement: about 6 MB of vectors at 768 dimensions. */
const WARM_BATCH = 2000;

/**
 * `pruneFrom`: chunks from which a copy builds its clusters (SVC_RAG_PRUNING_FROM_CHUNKS; 0: never); `logger` hears
 * of a failed build (once: the copies then keep scanning every row, as without clusters).
 */
export function createCollectionIndexes(
  dim: number,
  maxChunks: number,
  floatBudget: number,
  pruneFrom = 0,
  logger?: Logger,
): CollectionIndexes {
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<Entry>>();
  const rowBytes = dim * 4 + FLOAT_ROW_OVERHEAD;
  // the finer code, half a byte a component, and per row its step, bound, flag and place by sequence number
  const refineRowBytes = Math.ceil(dim / 2) + 21;
  const copyOptions = { pruneFrom: pruneFrom > 0 ? pruneFrom : Number.POSITIVE_INFINITY };
  let floatBytes = 0;
  let buildFailed = false;
  // assembled now, beside the replica's start, so its first question pays only for the copy it loads; a failure
  // here is met again, and reported, by the first copy built. The split pass's workers too, where a copy may be
  // large enough to split: a worker's start took 130 to 160 ms of CPU (at load 10), which the first large copy's load
  // shared two cores with; idle, it holds about 7 MiB
  if (maxChunks > 0)
    kernelModule()
      .then((modules) => {
        if (maxChunks >= SPLIT_FROM_ROWS) void startSplitWorkers(modules, splitThreads());
      })
      .catch(() => undefined);

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
        held.prepareDue = true; // rebuilds the clusters once the rows appended since are too many
        return remember(slug, { version, copy: held });
      }
    }
    // one read past the limit tells a collection too large for a copy, without counting it first
    const copy: Copy = {
      index: await createStoredIndex(dim, copyOptions),
      rows: 0,
      lastSeq: 0,
      seqSum: 0,
      floats: new Map(),
      floatBytes: 0,
      refineBytes: 0,
      spill: undefined,
      prepareDue: true,
    };
    const read = await store.readCodeBlocks(db, slug, maxChunks + 1, (rows) => appendRows(copy, rows), copy.index.reserve);
    if (read.total > maxChunks) return tooLarge();
    const entry = remember(slug, { version, copy });
    if (copy.rows * rowBytes <= floatBudget - floatBytes) void warmUp(db, slug, copy);
    else if (copy.rows >= pruneFrom && pruneFrom > 0) reserveRefinement(copy); // before questions keep their rows
    return entry;
  }

  /**
   * Starts the copy's clusters' build on a worker thread when one is due; a search never waits for it. Once built,
   * the clusters' finer code is read in (refine).
   */
  function prepare(db: Database, slug: string, copy: Copy) {
    copy.index
      .prepareInBackground()
      .then((built) => {
        if (built.state === 'built') {
          if (built.refined === 0) return refine(db, slug, copy);
        } else if (built.state === 'useless') giveBackRefinement(copy);
      })
      .catch((err: unknown) => {
        giveBackRefinement(copy);
        if (buildFailed) return;
        buildFailed = true;
        logger?.warn({ err, event: 'retrieval.pruning_build_failed' }, 'a copy could not build its clusters: its searches scan every row');
      });
  }

  /**
   * Reads every row's vector once, in sequence order, into the clusters' finer code (vector-index/refine.ts), so a
   * search reads back the few candidates the int8 bound alone could not part; only while the budget of kept floats
   * has room for it (about 400 bytes a row at 768 dimensions), and not for a copy whose floats are all kept (warmUp).
   * A failed read loses nothing: rows without the code keep the int8 bound.
   */
  async function refine(db: Database, slug: string, copy: Copy): Promise<void> {
    if (!copy.floats || copy.rows * rowBytes <= floatBudget) return; // warmed up whole, or released
    if (!reserveRefinement(copy)) return;
    // one COPY, each vector decoded into the same array: a read of every row with no object a row (reading them as
    // warmUp does left 300 MB for the collector at 100 000 rows, collected during the next questions)
    const row: { seq: number; vector: Float32Array }[] = [];
    copy.spill?.close();
    const spill = createVectorSpill(dim, copy.rows);
    copy.spill = spill;
    let spilling = spill !== undefined;
    try {
      await store.readVectors(db, slug, dim, copy.lastSeq, (seq, vector, id) => {
        row[0] = { seq, vector };
        if (!copy.floats || !copy.index.refine(row)) throw new Error('the copy was released or rebuilt: the read stops');
        if (!spilling) return;
        try {
          spill!.append(seq, id, vector);
        } catch {
          spilling = false; // the disk is full, say: the rows written so far are still read from the file
        }
      });
    } catch {
      // nothing lost: the rows not coded keep the int8 bound
    }
    try {
      spill?.flush();
    } catch {
      // as above: what was written is read, the rest comes from the database
    }
  }

  /** Reads every row of a new copy into its kept floats, a batch at a time, while the copy is current. */
  async function warmUp(db: Database, slug: string, copy: Copy): Promise<void> {
    const through = copy.lastSeq;
    try {
      for (let after = 0; copy.floats && after < through; ) {
        const rows = await store.vectorsInRange(db, slug, after, through, WARM_BATCH);
        if (rows.length === 0) break;
        keep(copy, rows);
        after = rows.at(-1)!.seq;
      }
    } catch {
      // nothing lost: a row not kept is read by the re-rank that needs it, as without a warm-up
    }
  }

  /**
   * The budget's bytes for the copy's finer code, taken when the copy loads (so the rows questions keep meanwhile do
   * not spend them first) and grown with the copy; false when the budget has no room for them.
   */
  function reserveRefinement(copy: Copy): boolean {
    const bytes = copy.rows * refineRowBytes;
    if (bytes - copy.refineBytes > floatBudget - floatBytes) return false;
    floatBytes += bytes - copy.refineBytes;
    copy.refineBytes = bytes;
    return true;
  }

  /** Clusters found not to prune: no finer code will be read, its bytes go back to the budget. */
  function giveBackRefinement(copy: Copy) {
    floatBytes -= copy.refineBytes;
    copy.refineBytes = 0;
  }

  function remember(slug: string, entry: Entry): Entry {
    const held = entries.get(slug)?.copy;
    if (held !== entry.copy) release(held);
    entries.set(slug, entry);
    return entry;
  }

  /** Keeps rows read for the re-rank while the budget lasts; a released copy keeps nothing (a search still on it). */
  function keep(copy: Copy, rows: { seq: number; id: string; vector: Float32Array }[]) {
    for (const { seq, id, vector } of rows) {
      if (!copy.floats || floatBytes + rowBytes > floatBudget) return;
      if (copy.floats.has(seq)) continue; // two searches read it at once
      copy.floats.set(seq, { vector, id });
      copy.floatBytes += rowBytes;
      floatBytes += rowBytes;
    }
  }

  function release(copy: Copy | 'too-large' | undefined) {
    if (!copy || copy === 'too-large') return;
    floatBytes -= copy.floatBytes + copy.refineBytes;
    copy.floatBytes = 0;
    copy.refineBytes = 0;
    copy.floats = undefined;
    copy.spill?.close();
    copy.spill = undefined;
    copy.index.release();
  }

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
    fetch: (copy: Copy, seqs: number[]) => Promise<{ seq: number; vector: Float32Array; item: T }[]>,
  ): Promise<{ copy: Copy; hits: (T & { score: number })[] } | 'too-large'> {
    const { copy } = await copyAt(db, slug, version);
    if (copy === 'too-large') return 'too-large';
    const hits = await copy.index.search(vector, k, (seqs) => fetch(copy, seqs));
    return { copy, hits: hits.map((h) => ({ ...h.item, score: h.score })) };
  }

  /**
   * The clusters that let a search skip rows (vector-index/clusters.ts), built once the question that loaded or
   * appended the rows is answered: started with the load, the build's copy of the rows to its thread and the thread
   * itself took the thread and the cores that answer (0.1 to 0.2 s of a 100 000-row first query, measured on 11-29).
   */
  function answered(db: Database, slug: string, copy: Copy) {
    if (!copy.prepareDue) return;
    copy.prepareDue = false;
    prepare(db, slug, copy);
  }

  /** The ranking read back without text: the candidates' vectors, from the kept floats or the spill where they are. */
  const searchIds = (db: Database, slug: string, version: number, vector: readonly number[], k: number) =>
    search(db, slug, version, vector, k, async (copy, seqs) => {
      const held: { seq: number; vector: Float32Array; item: { id: string } }[] = [];
      const missing: number[] = [];
      for (const seq of seqs) {
        const row = copy.floats?.get(seq) ?? copy.spill?.read(seq);
        if (row) held.push({ seq, vector: row.vector, item: { id: row.id } });
        else missing.push(seq);
      }
      if (missing.length === 0) return held;
      const read = await store.vectorsBySeq(db, slug, missing);
      keep(copy, read);
      return [...held, ...read.map(({ seq, id, vector: stored }) => ({ seq, vector: stored, item: { id } }))];
    });

  const rankIds: CollectionIndexes['rankIds'] = async (db, slug, version, vector, k) => {
    const found = await searchIds(db, slug, version, vector, k);
    if (found === 'too-large') return found;
    answered(db, slug, found.copy);
    return found.hits;
  };

  return {
    // The candidates' vectors first, then the text of the k that rank: a clustered copy's candidates are tens of
    // rows whose scores the int8 bound cannot part, and their text was most of what a query read. A chunk gone
    // between the two reads is left out, as one gone before the first is.
    async rank(db, slug, version, vector, k) {
      const found = await searchIds(db, slug, version, vector, k);
      if (found === 'too-large') return found;
      const ranked = found.hits;
      try {
        if (ranked.length === 0) return [];
        const chunks = new Map(
          (
            await store.chunksByIds(
              db,
              ranked.map((r) => r.id),
            )
          ).map((c) => [c.id, c]),
        );
        return ranked.flatMap((r) => {
          const chunk = chunks.get(r.id);
          return chunk ? [{ ...chunk, score: r.score }] : [];
        });
      } finally {
        answered(db, slug, found.copy);
      }
    },
    rankIds,
    drop(slug) {
      release(entries.get(slug)?.copy);
      entries.delete(slug);
    },
    bytes(slug) {
      const copy = entries.get(slug)?.copy;
      return copy && copy !== 'too-large' ? copy.index.bytes : 0;
    },
    floatBytes: () => floatBytes,
    pruning(slug) {
      const copy = entries.get(slug)?.copy;
      return copy && copy !== 'too-large' ? copy.index.pruning : undefined;
    },
    readAll(slug) {
      const copy = entries.get(slug)?.copy;
      if (!copy || copy === 'too-large') return false;
      copy.index.readAll();
      return true;
    },
  };
}

/** A piece of a load's rows: their codes at once where every row has one (as ingestion writes them), else one by one. */
function appendRows(copy: Copy, rows: store.StoredRows): void {
  const { count, seqs, codeAt } = rows;
  if (count === 0) return;
  if (codeAt.subarray(0, count).includes(-1)) {
    for (let i = 0; i < count; i++) append(copy, rows.rowOf(i));
    return;
  }
  copy.index.addCodes(rows);
  copy.rows += count;
  copy.lastSeq = seqs[count - 1]!;
  for (let i = 0; i < count; i++) copy.seqSum += seqs[i]!;
}

function append(copy: Copy, row: store.StoredRow): void {
  if (row.code) copy.index.addCode(row.seq, row.code);
  else if (row.vector) copy.index.addVector(row.seq, row.vector);
  else throw new Error(`chunk ${row.seq} has neither a code nor a vector`);
  copy.rows += 1;
  copy.lastSeq = row.seq;
  copy.seqSum += row.seq;
}
