import type { Sql } from '../../platform/db/index.ts';
import { analyse } from './analyse.ts';
import { createKeywordIndex, type KeywordIndex } from './bm25.ts';
import { chunkCount, textsAfter, type TextSource } from './rows.ts';

// In-memory keyword indexes, one per collection, kept current exactly as the vector copies are (indexes.ts): the
// caller reads the collection's version, and a copy at another version reads only the chunks after its last one
// when the chunk count and the sum of sequence numbers show nothing else changed, and is rebuilt otherwise. So
// every replica ranks from what the database holds, and a keyword answer is the same on PGlite and Postgres.
type Copy = { index: KeywordIndex; rows: number; lastSeq: number; seqSum: number };
type Entry = { version: number; copy: Copy | 'too-large' };

export type KeywordIndexes = {
  /** The index at `version`, or 'too-large' above the chunk limit a copy may hold. */
  get(sql: Sql, slug: string, version: number): Promise<KeywordIndex | 'too-large'>;
  drop(slug: string): void;
};

/** Rows analysed between two turns of the event loop, so building a large copy never holds other requests. */
const YIELD_EVERY = 256;

/** `source`: where the chunk texts are read (Postgres by default; a lake collection's table, backends/lake.ts). */
export function createKeywordIndexes(maxChunks: number, source: TextSource = { textsAfter, chunkCount }): KeywordIndexes {
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<Entry>>();

  async function catchUp(sql: Sql, slug: string, version: number, held: Copy | undefined): Promise<Entry> {
    if (held) {
      const delta = await source.textsAfter(sql, slug, held.lastSeq);
      const added = delta.rows;
      const unchanged = delta.total === held.rows + added.length && delta.seqSum === held.seqSum + added.reduce((s, r) => s + r.seq, 0);
      if (unchanged && delta.total <= maxChunks) {
        await append(held, added);
        return remember(slug, { version, copy: held });
      }
    }
    if ((await source.chunkCount(sql, slug)) > maxChunks) return remember(slug, { version, copy: 'too-large' });
    const all = await source.textsAfter(sql, slug, 0);
    const copy: Copy = { index: createKeywordIndex(), rows: 0, lastSeq: 0, seqSum: 0 };
    await append(copy, all.rows);
    return remember(slug, { version, copy });
  }

  const remember = (slug: string, entry: Entry) => (entries.set(slug, entry), entry);

  return {
    async get(sql, slug, version) {
      const held = entries.get(slug);
      if (held?.version === version) return index(held);
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

async function append(copy: Copy, rows: { seq: number; id: string; text: string }[]): Promise<void> {
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    const r = rows[i]!;
    copy.index.add(r.id, analyse(r.text));
    copy.rows++;
    copy.lastSeq = r.seq;
    copy.seqSum += r.seq;
  }
}
