import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyInt8, createCopyDecoder, openPglite, type Database } from '../../src/platform/db/index.ts';
import {
  CODE_HEADER,
  createStoredIndex,
  createVectorIndex,
  encodeRow,
  unitRow,
  type StoredIndex,
} from '../../src/retrieval/vector-index/index.ts';
import { gaussians } from '../support/random-vectors.ts';

// A collection's copy keeps only the int8 codes in memory and reads float rows back for the exact scores. It must
// answer exactly what the all-in-memory index answers (itself held to a full scan in retrieval-vector-index), and
// read back only a small share of the rows.

const DIM = 768;

/** A stored index over `vectors` (seq = 10·row + 7), with codes as ingestion writes them or, for `legacy` rows, none. */
async function storedOf(vectors: readonly Float32Array[], legacy: (row: number) => boolean = () => false, dim = DIM) {
  const index = await createStoredIndex(dim);
  const scratch = new Float64Array(dim);
  vectors.forEach((v, row) => {
    const seq = 10 * row + 7;
    if (legacy(row)) index.addVector(seq, v);
    else index.addCode(seq, encodeRow(unitRow(v, dim, scratch, new Float32Array(dim)), dim, new Uint8Array(CODE_HEADER + dim)));
  });
  const fetched: number[][] = [];
  const fetch = async (seqs: number[]) => {
    fetched.push(seqs);
    return seqs.flatMap((seq) =>
      seq % 10 === 7 && vectors[(seq - 7) / 10] ? [{ seq, vector: vectors[(seq - 7) / 10]!, item: `id${(seq - 7) / 10}` }] : [],
    );
  };
  return { index, fetch, fetched };
}

async function expectSameAsInMemory(
  vectors: readonly Float32Array[],
  queries: readonly Float32Array[],
  stored: { index: StoredIndex; fetch: Parameters<StoredIndex['search']>[2] },
) {
  const memory = await createVectorIndex(DIM);
  memory.add(
    vectors.map((_, row) => `id${row}`),
    vectors,
  );
  for (const q of queries) {
    for (const k of [1, 5, 10, 50]) {
      const got = await stored.index.search(q, k, stored.fetch);
      expect(got.map((h) => ({ id: h.item, score: h.score }))).toEqual(memory.search(q, k));
    }
  }
}

describe('stored index: int8 codes in memory, float rows read back', () => {
  it('answers exactly as the in-memory index on random rows, reading back a small share of them', async () => {
    const vectors = gaussians(5000, 1);
    const stored = await storedOf(vectors);
    const queries = [...gaussians(8, 2), vectors[10]!, Float32Array.from(vectors[20]!, (x) => -x)];
    await expectSameAsInMemory(vectors, queries, stored);
    const { searches, fetched } = stored.index.stats;
    expect(searches).toBe(queries.length * 4);
    expect(fetched / searches).toBeLessThan(0.05 * vectors.length);
  });

  it('answers the same from codes and from vectors (rows stored before codes were kept)', async () => {
    const vectors = gaussians(600, 3);
    const queries = gaussians(6, 4);
    await expectSameAsInMemory(vectors, queries, await storedOf(vectors, (row) => row % 3 === 0));
    await expectSameAsInMemory(vectors, queries, await storedOf(vectors, () => true));
  });

  it('keeps sequence order among equal scores and reads back every tied row, in batches', async () => {
    const base = gaussians(1, 5)[0]!;
    const vectors = [...gaussians(40, 6), ...Array.from({ length: 300 }, () => Float32Array.from(base)), ...gaussians(40, 7)];
    const stored = await storedOf(vectors);
    const hits = await stored.index.search(base, 50, stored.fetch);
    expect(hits.map((h) => h.item)).toEqual(Array.from({ length: 50 }, (_, i) => `id${40 + i}`));
    expect(stored.fetched.length).toBeGreaterThan(1); // 300 tied candidates come back a batch at a time
    await expectSameAsInMemory(vectors, [base, ...gaussians(4, 8)], stored);
  });

  it('leaves out rows that are gone when read back, and checks its input', async () => {
    const vectors = gaussians(200, 9);
    const stored = await storedOf(vectors);
    const gone = new Set([(await stored.index.search(vectors[5]!, 1, stored.fetch))[0]!.seq]);
    const hits = await stored.index.search(vectors[5]!, 3, async (seqs) => (await stored.fetch(seqs)).filter((f) => !gone.has(f.seq)));
    expect(hits.map((h) => h.item)).not.toContain('id5');
    expect(hits.length).toBeLessThanOrEqual(3);
    expect(() => stored.index.addCode(17, new Uint8Array(CODE_HEADER + DIM))).toThrow(/ascending sequence order/);
    expect(() => stored.index.addCode(1e6, new Uint8Array(10))).toThrow(/does not hold 768 dimensions/);
    await expect(stored.index.search(vectors[0]!, 0, stored.fetch)).rejects.toThrow(/k must be a positive integer/);
    await expect(stored.index.search([1, 2], 1, stored.fetch)).rejects.toThrow(/dimension 2/);
    expect(await (await createStoredIndex(DIM)).search(vectors[0]!, 3, stored.fetch)).toEqual([]);
    expect((await stored.index.search(new Float32Array(DIM), 2, stored.fetch)).map((h) => [h.item, h.score])).toEqual([
      ['id0', 0],
      ['id1', 0],
    ]);
  });

  it('appends a load a piece at a time (addCodes) exactly as row by row, at any dimension', async () => {
    for (const dim of [768, 100]) {
      const vectors = gaussians(700, 11, dim);
      const codeBytes = CODE_HEADER + dim;
      const codes = vectors.map((v) =>
        encodeRow(unitRow(v, dim, new Float64Array(dim), new Float32Array(dim)), dim, new Uint8Array(codeBytes)),
      );
      const seqOf = (row: number) => 10 * row + 7;
      const byRow = await createStoredIndex(dim);
      for (const [row, code] of codes.entries()) byRow.addCode(seqOf(row), code);
      // pieces of 1, 37 and 400 rows (400 codes span more than is copied at once), each code 9 bytes of 0xff after
      // the last, as the fields of a COPY lie: none of them may reach a row's padding
      const byPiece = await createStoredIndex(dim);
      for (let from = 0, i = 0; from < codes.length; i++) {
        const piece = codes.slice(from, from + [1, 37, 400][i % 3]!);
        const bytes = new Uint8Array(5 + piece.length * (codeBytes + 9)).fill(0xff);
        const codeAt = Int32Array.from(piece, (_, j) => 5 + j * (codeBytes + 9));
        for (const [j, code] of piece.entries()) bytes.set(code, codeAt[j]!);
        const seqs = Float64Array.from(piece, (_, j) => seqOf(from + j));
        byPiece.addCodes({ count: piece.length, seqs, bytes, codeAt, codeLength: new Int32Array(piece.length).fill(codeBytes) });
        from += piece.length;
      }
      expect(byPiece.size).toBe(codes.length);
      const fetch = async (seqs: number[]) => seqs.map((seq) => ({ seq, vector: vectors[(seq - 7) / 10]!, item: seq }));
      for (const q of gaussians(5, 12, dim)) expect(await byPiece.search(q, 10, fetch)).toEqual(await byRow.search(q, 10, fetch));
      expect(byPiece.stats).toEqual(byRow.stats); // the same rows read back: the same bounds
      const one = (seq: number, length = codeBytes) => ({
        count: 1,
        seqs: Float64Array.of(seq),
        bytes: new Uint8Array(codeBytes),
        codeAt: Int32Array.of(0),
        codeLength: Int32Array.of(length),
      });
      expect(() => byPiece.addCodes(one(17))).toThrow(/ascending sequence order/);
      expect(() => byPiece.addCodes(one(1e6, 10))).toThrow(new RegExp(`does not hold ${dim} dimensions`));
      expect(byPiece.size).toBe(codes.length);
    }
  });

  it('holds about 792 bytes a row at 768 dimensions (no float rows)', async () => {
    const { index } = await storedOf(gaussians(4000, 10));
    expect(index.bytes / 4000).toBeLessThan(900);
  });
});

describe('binary COPY decoding', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite({});
  });
  afterAll(() => db.close());

  const collect = async (pieces: Uint8Array[]) => {
    const rows: (string | null)[][] = [];
    const decoder = createCopyDecoder((fields) => rows.push(fields.map((f) => (f === null ? null : Buffer.from(f).toString('hex')))));
    for (const piece of pieces) decoder.feed(piece);
    decoder.finish();
    return rows;
  };

  it('reads the same rows however the output is cut into pieces, and refuses output cut short', async () => {
    const whole: Uint8Array[] = [];
    await db.copyOut(
      `SELECT g::int8, CASE WHEN g % 3 = 0 THEN NULL ELSE decode(repeat('ab', g), 'hex') END FROM generate_series(1, 40) g`,
      (piece) => whole.push(piece.slice()),
    );
    const bytes = Buffer.concat(whole);
    const want = await collect([bytes]);
    expect(want).toHaveLength(40);
    expect(want[2]).toEqual(['0000000000000003', null]);
    expect(copyInt8(Buffer.from(want[39]![0]!, 'hex'))).toBe(40);
    for (const size of [1, 2, 3, 7, 19, 64, 1000]) {
      const pieces = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
      expect(await collect(pieces)).toEqual(want);
    }
    await expect(collect([bytes.subarray(0, bytes.length - 2)])).rejects.toThrow(/ended before its trailer/);
    await expect(collect([Buffer.from('1,2\n3,4\n5,6\n7,8\n9,10\n')])).rejects.toThrow(/not binary COPY/);
  });
});

describe('collection copies and their size limit', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite({});
  });
  afterAll(() => db.close());

  it('answers from the copy up to the limit, then leaves the collection to pgvector, and back again after a rebuild', async () => {
    const { retrievalHarness, who } = await import('../support/retrieval.ts');
    const h = await retrievalHarness(db, {
      env: { SVC_RAG_MEMORY_INDEX_MAX_CHUNKS: '3', SVC_CHUNK_SIZE_TOKENS: '4', SVC_CHUNK_OVERLAP_TOKENS: '0' },
    });
    const text = (s: string) => new TextEncoder().encode(s);
    const rank = async () => {
      const [head] = await db.query<{ version: number }>(`SELECT version FROM retrieval_collections WHERE slug = 'limited'`);
      const vector = (await h.deps.embedder.embed(['alpha bravo']))[0]!;
      const ranked = await h.deps.indexes.rank(db, 'limited', head!.version, vector, 3);
      return ranked === 'too-large' ? ranked : ranked.map((c) => c.text);
    };
    const create = () => h.json('POST', '/collections', who.engineer, { slug: 'limited', name: 'Limited', allowed_roles: [] });
    await create();
    await h.upload('limited', who.engineer, { name: 'a.txt', bytes: text('alpha bravo charlie delta echo foxtrot golf hotel') });
    expect(await rank()).toEqual(['alpha bravo charlie delta', 'echo foxtrot golf hotel']);
    await h.upload('limited', who.engineer, { name: 'b.txt', bytes: text('india juliet kilo lima mike') });
    expect(await rank()).toBe('too-large'); // 4 chunks: caught up past the limit
    await h.upload('limited', who.engineer, { name: 'c.txt', bytes: text('november oscar') });
    expect(await rank()).toBe('too-large'); // counted, not read
    expect((await h.json('DELETE', '/collections/limited', who.admin)).status).toBe(200);
    await create();
    await h.upload('limited', who.engineer, { name: 'd.txt', bytes: text('alpha bravo') });
    expect(await rank()).toEqual(['alpha bravo']);
    expect(h.deps.indexes.bytes('limited')).toBeGreaterThan(0);
    await h.close();
  });

  it('reads many rows’ vectors in a few statements at once, each row once and as read alone', async () => {
    const { retrievalHarness, who } = await import('../support/retrieval.ts');
    const store = await import('../../src/retrieval/store.ts');
    const h = await retrievalHarness(db, { env: { SVC_CHUNK_SIZE_TOKENS: '2', SVC_CHUNK_OVERLAP_TOKENS: '0' } });
    await h.json('POST', '/collections', who.engineer, { slug: 'many', name: 'Many', allowed_roles: [] });
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    await h.upload('many', who.engineer, { name: 'a.txt', bytes: new TextEncoder().encode(words) });
    const seqs = (await db.query<{ seq: number }>(`SELECT seq FROM retrieval_chunks WHERE collection_slug = 'many' ORDER BY seq`)).map(
      (r) => Number(r.seq),
    );
    expect(seqs.length).toBeGreaterThanOrEqual(27);
    const asked = [...seqs.slice(0, 27)].reverse();
    const read = await store.vectorsBySeq(db, 'many', asked);
    expect(read.map((r) => r.seq).sort((a, b) => a - b)).toEqual([...asked].sort((a, b) => a - b));
    for (const row of read) expect(await store.vectorsBySeq(db, 'many', [row.seq])).toEqual([row]);
    await h.close();
  });

  it('builds a copy in one read on a replica that has none, at the limit and past it', async () => {
    const { retrievalHarness, who } = await import('../support/retrieval.ts');
    const env = { SVC_CHUNK_SIZE_TOKENS: '2', SVC_CHUNK_OVERLAP_TOKENS: '0' };
    const writer = await retrievalHarness(db, { env });
    await writer.json('POST', '/collections', who.engineer, { slug: 'loaded', name: 'Loaded', allowed_roles: [] });
    const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet';
    await writer.upload('loaded', who.engineer, { name: 'a.txt', bytes: new TextEncoder().encode(words) });
    // a replica that has just started: its first question loads the copy, unless the collection is past its limit
    const ask = async (maxChunks: string) => {
      const replica = await retrievalHarness(db, { env: { ...env, SVC_RAG_MEMORY_INDEX_MAX_CHUNKS: maxChunks } });
      const q = await replica.json('POST', '/collections/loaded/query', who.engineer, {
        question: 'charlie delta',
        top_k: 5,
        mode: 'dense',
      });
      const answer = {
        ranked: q.body.chunks.map((c: { text: string; score: number }) => [c.text, c.score]),
        copy: replica.deps.indexes.bytes('loaded') > 0,
      };
      await replica.close();
      return answer;
    };
    const direct = await ask('0'); // pgvector's own ranking
    expect(direct.ranked).toHaveLength(5);
    expect(direct.ranked[0]).toEqual(['charlie delta', expect.closeTo(1, 5)]);
    for (const maxChunks of ['5', '1000']) {
      const loaded = await ask(maxChunks);
      expect(loaded.copy).toBe(true);
      expect(loaded.ranked.map((r: unknown[]) => r[0])).toEqual(direct.ranked.map((r: unknown[]) => r[0]));
      loaded.ranked.forEach((r: number[], i: number) => {
        expect(r[1]).toBeCloseTo(direct.ranked[i][1], 5);
      });
    }
    expect(await ask('4')).toEqual({ ranked: direct.ranked, copy: false }); // one row past the limit: pgvector answers
    await writer.close();
  });
});
