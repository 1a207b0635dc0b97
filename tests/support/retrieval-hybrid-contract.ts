import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenDb } from './retrieval-contract.ts';
import { retrievalHarness, who, type Identity, type RetrievalHarness } from './retrieval.ts';
import { startScriptedGateway, type ScriptedGateway } from './scripted-gateway.ts';

// Hybrid, keyword and dense ranking through HTTP (issue 16), on PGlite (unit) and real Postgres (integration). The
// embeddings come from a scripted OpenAI-compatible gateway whose vectors carry no lexical signal, so whatever
// finds an exact token finds it by keyword.

const enc = (s: string) => new TextEncoder().encode(s);
const DIM = 32;

/** A unit vector from the text's hash: two texts sharing every word but one are as far apart as any two. */
function noiseVector(text: string): number[] {
  const seed = createHash('sha256').update(text).digest();
  const v = Array.from({ length: DIM }, (_, i) => seed.readInt8(i % 32) + ((i * 7919) % 13) - 6);
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

type Chunk = { chunk_id: string; filename: string; text: string; score: number; dense_rank: number | null; keyword_rank: number | null };

/** Reciprocal rank fusion as the issue states it (k = 60), with equal scores sharing a rank; written apart from the service's. */
function expectedFusion(dense: Chunk[], keyword: Chunk[], k: number) {
  const rankOf = (list: Chunk[]) => new Map(list.map((c) => [c.chunk_id, 1 + list.filter((o) => o.score > c.score).length]));
  const d = rankOf(dense);
  const kw = rankOf(keyword);
  const ids = [...new Set([...dense, ...keyword].map((c) => c.chunk_id))];
  const pos = (list: Chunk[], id: string) => {
    const i = list.findIndex((c) => c.chunk_id === id);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return ids
    .map((id) => {
      const dr = d.get(id) ?? null;
      const kr = kw.get(id) ?? null;
      return { id, dr, kr, score: (dr === null ? 0 : 1 / (60 + dr)) + (kr === null ? 0 : 1 / (60 + kr)) };
    })
    .sort((a, b) => b.score - a.score || pos(dense, a.id) - pos(dense, b.id) || pos(keyword, a.id) - pos(keyword, b.id))
    .slice(0, k);
}

const corpus = [
  ['err-4470.txt', 'Error ERR-4470 means the disk quota is exceeded; free some space and retry the error-prone job.'],
  ['err-4471.txt', 'ERR-4471: the replication slot is full. Drop stale slots before restarting replication.'],
  ['errors.txt', 'Error handling guide: every error has a code, errors are logged, and an error page explains each error.'],
  ['invoice.txt', 'Invoice INV-2026-0042 is due on 2026-12-31; contact billing@example.com with questions about invoices.'],
  ['release.txt', 'Upgrade to v2.3.1 before the migration: the user_id column became a bigint in that release.'],
  ['factures.txt', 'Les factures impayées doivent être réglées avant la fin du mois par le service comptable.'],
  ['weather.txt', 'The weather in the valley was sunny with a light breeze all afternoon.'],
  ['cooking.txt', 'Bread is baked from flour, water, yeast and salt in a hot oven.'],
];

/**
 * `env` is added to every harness's settings (SVC_RAG_DEFAULT_BACKEND=lake and Trino's: every collection on the lake),
 * `tokens` are sent as X-User-Token, and `asker` asks the questions (on the lake, a user Trino lets read it).
 */
export function retrievalHybridContract(
  label: string,
  openDb: OpenDb,
  opts: { env?: Record<string, string>; tokens?: Record<string, string>; asker?: Identity } = {},
) {
  const asker = opts.asker ?? who.user;
  const harness = (db: RetrievalHarness['db'], env: Record<string, string>) =>
    retrievalHarness(db, { env: { ...opts.env, ...env }, ...(opts.tokens ? { tokens: opts.tokens } : {}) });
  describe(`hybrid and keyword ranking (${label})`, () => {
    let gw: ScriptedGateway;
    let h: RetrievalHarness;
    let cleanup: () => Promise<void>;
    const embedding = { vectors: 'flat' as 'flat' | 'noise' };

    beforeAll(async () => {
      const opened = await openDb();
      cleanup = opened.cleanup;
      // one gateway; what its vectors are is switched per collection (all chunks of a collection are embedded alike)
      gw = await startScriptedGateway({
        dim: DIM,
        embed: (body) => {
          const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
          return inputs.map((t) =>
            embedding.vectors === 'flat' ? Array.from({ length: DIM }, (_, i) => (i === 0 ? 1 : 0)) : noiseVector(t),
          );
        },
      });
      const env = { SVC_EMBED_URL: gw.url, SVC_EMBED_DIM: String(DIM) };
      h = await harness(opened.db, env);
    });
    afterAll(async () => {
      await h?.close();
      await gw?.close();
      await cleanup?.();
    });

    async function fill(h: RetrievalHarness, slug: string, vectors: 'flat' | 'noise') {
      embedding.vectors = vectors;
      expect((await h.json('POST', '/collections', who.engineer, { slug, name: slug, allowed_roles: [] })).status).toBe(201);
      for (const [name, body] of corpus) expect((await h.upload(slug, who.engineer, { name: name!, bytes: enc(body!) })).status).toBe(201);
    }
    const ask = async (h: RetrievalHarness, slug: string, body: Record<string, unknown>) => {
      const res = await h.json('POST', `/collections/${slug}/query`, asker, body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.chunks as Chunk[];
    };

    it('finds the chunk holding ERR-4471 first in hybrid (the default) and keyword mode, though the vectors say nothing', async () => {
      await fill(h, 'flat', 'flat');
      for (const question of ['ERR-4471', 'what does error ERR-4471 mean?', 'err-4471 replication']) {
        for (const mode of [undefined, 'hybrid', 'keyword']) {
          const chunks = await ask(h, 'flat', { question, top_k: 3, ...(mode ? { mode } : {}) });
          expect(chunks[0]!.filename, `${mode ?? 'default'}: ${question}`).toBe('err-4471.txt');
          expect(chunks[0]!.keyword_rank).toBe(1);
        }
      }
      // the dense list alone cannot tell: every chunk scores the same and shares rank 1
      const dense = await ask(h, 'flat', { question: 'ERR-4471', top_k: 8, mode: 'dense' });
      expect(dense).toHaveLength(8);
      expect(new Set(dense.map((c) => c.score)).size).toBe(1);
      expect(dense.every((c) => c.dense_rank === 1 && c.keyword_rank === null)).toBe(true);
    });

    it('keeps identifiers, e-mail addresses and numbers whole, and stems English and French', async () => {
      const first = async (question: string) => (await ask(h, 'flat', { question, top_k: 3, mode: 'keyword' }))[0]?.filename;
      expect(await first('INV-2026-0042')).toBe('invoice.txt');
      expect(await first('billing@example.com')).toBe('invoice.txt');
      expect(await first('v2.3.1')).toBe('release.txt');
      expect(await first('user_id')).toBe('release.txt');
      expect(await first('2026-12-31')).toBe('invoice.txt');
      expect(await first('invoice')).toBe('invoice.txt'); // "invoices" in the text
      expect(await first('facture impayée')).toBe('factures.txt'); // "factures impayées"
      expect(await first('Facture impayee')).toBe('factures.txt'); // without its accents
      // the near miss shares a word, not the code: it comes after the exact one
      const near = await ask(h, 'flat', { question: 'ERR-4470', top_k: 3, mode: 'keyword' });
      expect(near[0]!.filename).toBe('err-4470.txt');
      // stop words alone match nothing
      expect(await ask(h, 'flat', { question: 'the and of', mode: 'keyword' })).toEqual([]);
    });

    it('fuses exactly as reciprocal rank fusion computed here from the dense and keyword lists', async () => {
      await fill(h, 'noisy', 'noise');
      for (const question of ['error code for the replication slot', 'ERR-4471', 'invoice due billing', 'bread oven weather']) {
        const dense = await ask(h, 'noisy', { question, top_k: 50, mode: 'dense' });
        const keyword = await ask(h, 'noisy', { question, top_k: 50, mode: 'keyword' });
        const hybrid = await ask(h, 'noisy', { question, top_k: 5 });
        const want = expectedFusion(dense, keyword, 5);
        expect(
          hybrid.map((c) => c.chunk_id),
          question,
        ).toEqual(want.map((w) => w.id));
        hybrid.forEach((c, i) => {
          expect(c.score).toBeCloseTo(want[i]!.score, 12);
          expect([c.dense_rank, c.keyword_rank]).toEqual([want[i]!.dr, want[i]!.kr]);
        });
        // dense mode is cosine as before: ranks 1..n by descending score, no keyword rank
        expect(dense.map((c) => c.dense_rank)).toEqual(dense.map((_, i) => i + 1));
        expect(dense.every((c) => c.keyword_rank === null)).toBe(true);
        expect(keyword.every((c) => c.dense_rank === null && c.score > 0)).toBe(true);
      }
      // above SVC_RAG_MEMORY_INDEX_MAX_CHUNKS pgvector offers the dense candidates: the same fusion
      const direct = await harness(h.db, { SVC_EMBED_URL: gw.url, SVC_EMBED_DIM: String(DIM), SVC_RAG_MEMORY_INDEX_MAX_CHUNKS: '0' });
      try {
        const q = { question: 'error code for the replication slot', top_k: 5 };
        const viaMemory = await ask(h, 'noisy', q);
        const viaPgvector = await ask(direct, 'noisy', q);
        expect(viaPgvector.map((c) => [c.chunk_id, c.dense_rank, c.keyword_rank])).toEqual(
          viaMemory.map((c) => [c.chunk_id, c.dense_rank, c.keyword_rank]),
        );
      } finally {
        await direct.close();
      }
      // the audit keeps the fused scores the caller was given
      const audit = await h.json('GET', '/audit/queries?limit=1', who.admin);
      expect(audit.body.queries[0].chunks.every((c: { score: number }) => c.score > 0 && c.score < 2 / 61 + 1e-12)).toBe(true);
    });

    it('keeps the keyword copy of another replica current, as the vector copy is', async () => {
      embedding.vectors = 'flat';
      const replica = await harness(h.db, { SVC_EMBED_URL: gw.url, SVC_EMBED_DIM: String(DIM) });
      try {
        await replica.json('POST', '/collections', who.engineer, { slug: 'shared', name: 'shared', allowed_roles: [] });
        await replica.upload('shared', who.engineer, { name: 'a.txt', bytes: enc('The pump PX-9000 is rated for 40 bar.') });
        const find = (h: RetrievalHarness) => ask(h, 'shared', { question: 'QZ-7 valve', mode: 'keyword' });
        expect(await find(h)).toEqual([]);
        await h.upload('shared', who.engineer, { name: 'b.txt', bytes: enc('Valve QZ-7 must be closed before maintenance.') });
        expect((await find(replica)).map((c) => c.filename)).toEqual(['b.txt']);
        // a collection deleted and made again is never answered from the old copy
        expect((await h.json('DELETE', '/collections/shared', who.admin)).status).toBe(200);
        await h.json('POST', '/collections', who.engineer, { slug: 'shared', name: 'shared', allowed_roles: [] });
        await h.upload('shared', who.engineer, { name: 'c.txt', bytes: enc('Nothing about valves here.') });
        expect((await find(replica)).map((c) => c.filename)).toEqual(['c.txt']);
      } finally {
        await replica.close();
      }
    });

    it('refuses an unknown mode naming the field, and a collection past the keyword limit with 422 naming the setting', async () => {
      const bad = await h.json('POST', '/collections/flat/query', asker, { question: 'x', mode: 'fuzzy' });
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([
        expect.objectContaining({ location: 'json.mode', message: expect.stringContaining('hybrid, dense, keyword') }),
      ]);

      const small = await harness(h.db, { SVC_EMBED_URL: gw.url, SVC_EMBED_DIM: String(DIM), SVC_RAG_KEYWORD_INDEX_MAX_CHUNKS: '3' });
      // the limit bounds svc's own BM25 copy: a search-backend collection has none (OpenSearch ranks it), so no limit
      const ownCopy = (await h.json('GET', '/collections/flat', asker)).body.backend !== 'search';
      try {
        for (const mode of ['hybrid', 'keyword']) {
          const res = await small.json('POST', '/collections/flat/query', asker, { question: 'ERR-4471', mode });
          if (!ownCopy) {
            expect(res.status).toBe(200);
            expect(res.body.chunks[0].text).toContain('ERR-4471');
            continue;
          }
          expect(res.status).toBe(422);
          expect(res.body.detail).toContain('SVC_RAG_KEYWORD_INDEX_MAX_CHUNKS');
          expect(res.body.detail).toContain('"mode": "dense"');
        }
        expect((await small.json('POST', '/collections/flat/query', asker, { question: 'ERR-4471', mode: 'dense' })).status).toBe(200);
      } finally {
        await small.close();
      }
    });
  });
}
