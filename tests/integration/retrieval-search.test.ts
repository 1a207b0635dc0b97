import { Client } from '@opensearch-project/opensearch';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkCut, type NetworkCut } from '../support/network-cut.ts';
import { openSearchSettings, searchEnv } from '../support/opensearch.ts';
import { openFreshPostgres } from '../support/pg.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// The search backend against the real OpenSearch: the same documents in a memory collection and a search
// collection rank alike; one collection's query never reaches another's chunks; and OpenSearch going away mid-upload
// leaves no document half indexed, answers queries 503 while it is away, and needs no restart once it is back. The
// outage is a cut in the network between svc and OpenSearch (tests/support/network-cut.ts): the server other files
// share keeps running.

const enc = (s: string) => new TextEncoder().encode(s);
const DOCUMENTS = [
  {
    name: 'runbook.txt',
    text: 'Runbook: error ERR-4471 means the replication slot is full. The runners were running past the stations at dawn. Rotate the keys monthly.',
  },
  {
    name: 'gares.txt',
    text: 'Les coureurs couraient vers les gares du nord. La bibliothèque municipale ferme à dix-huit heures. Le réseau régional est en travaux.',
  },
  {
    name: 'invoices.md',
    text: '# Invoices\n\nInvoice INV-2026-0042 is due on 2026-12-31. Contact billing@example.com about late invoices and the user_id field.',
  },
  { name: 'library.txt', text: 'A quiet library of old books. Readers borrow books for three weeks; late books cost a fine.' },
];
const QUESTIONS = ['ERR-4471', 'runs station', 'coureur gare', 'INV-2026-0042', 'user_id', 'book library fine', 'bibliothèque'];

describe('retrieval on the search backend (OpenSearch, Postgres)', () => {
  let h: RetrievalHarness;
  let cut: NetworkCut;
  let cutHarness: RetrievalHarness;
  let cleanup: () => Promise<void>;
  let dropIndexes: () => Promise<void>;
  let admin: Client;

  beforeAll(async () => {
    const search = await searchEnv();
    dropIndexes = search.dropIndexes;
    const settings = await openSearchSettings();
    admin = new Client({
      node: settings.url,
      auth: { username: settings.user, password: settings.password },
      ssl: { ca: readFileSync(settings.ca) },
    });
    const opened = await openFreshPostgres('search');
    cleanup = opened.cleanup;
    const env = { ...search.env, SVC_CHUNK_SIZE_TOKENS: '12', SVC_CHUNK_OVERLAP_TOKENS: '2' };
    h = await retrievalHarness(opened.db, { env });
    // a second replica on the same database reaches OpenSearch through a relay the test can cut
    const target = new URL(settings.url);
    cut = await networkCut({ host: target.hostname, port: Number(target.port) });
    cutHarness = await retrievalHarness(opened.db, {
      env: { ...env, SVC_OPENSEARCH_URL: `https://${target.hostname}:${cut.port}`, SVC_RAG_SEARCH_BULK_CHUNKS: '2' },
    });
    for (const [slug, backend] of [
      ['same-memory', 'memory'],
      ['same-search', 'search'],
    ] as const) {
      const created = await h.json('POST', '/collections', who.engineer, { slug, name: slug, allowed_roles: [], backend });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.backend).toBe(backend);
      for (const doc of DOCUMENTS) {
        const up = await h.upload(slug, who.engineer, { name: doc.name, bytes: enc(doc.text), type: 'text/plain' });
        expect(up.status, JSON.stringify(up.body)).toBe(201);
      }
    }
  }, 600_000);

  afterAll(async () => {
    await h?.close();
    await cutHarness?.close();
    await cut?.close();
    await admin?.close();
    await dropIndexes?.();
    await cleanup?.();
  }, 120_000);

  const ask = (slug: string, body: Record<string, unknown>, on = h) =>
    on.json('POST', `/collections/${slug}/query`, who.user, { top_k: 5, ...body });
  const createSearchCollection = (slug: string, on = h) =>
    on.json('POST', '/collections', who.engineer, { slug, name: slug, allowed_roles: [], backend: 'search' });
  const said = (chunks: { filename: string; text: string }[]) => chunks.map((c) => `${c.filename}: ${c.text}`);

  it('ranks keywords as the memory backend does: the same top three chunks for English, French and identifiers', async () => {
    for (const question of QUESTIONS) {
      const [memory, search] = await Promise.all([
        ask('same-memory', { question, mode: 'keyword' }),
        ask('same-search', { question, mode: 'keyword' }),
      ]);
      expect(search.status, JSON.stringify(search.body)).toBe(200);
      expect(memory.body.chunks.length, question).toBeGreaterThan(0);
      // the same chunks lead; where two score close, Lucene's BM25 may order them otherwise (docs/retrieval.md)
      expect(said(search.body.chunks).slice(0, 3).sort(), question).toEqual(said(memory.body.chunks).slice(0, 3).sort());
      expect(search.body.exact).toBe(true);
    }
  });

  it("ranks dense by OpenSearch's k-NN, which says it is not exact, and fuses hybrid in svc", async () => {
    for (const question of QUESTIONS) {
      const [memory, search] = await Promise.all([
        ask('same-memory', { question, mode: 'dense' }),
        ask('same-search', { question, mode: 'dense' }),
      ]);
      expect(search.body.exact).toBe(false);
      expect(memory.body.exact).toBe(true);
      // a handful of chunks: the HNSW graph holds them all, so its answer is the exact one, scores to float32
      expect(said(search.body.chunks)).toEqual(said(memory.body.chunks));
      for (const [i, c] of (search.body.chunks as { score: number }[]).entries())
        expect(c.score).toBeCloseTo(memory.body.chunks[i].score, 5);
      const hybrid = await ask('same-search', { question });
      expect(hybrid.body.exact).toBe(false);
      expect(said(hybrid.body.chunks)).toEqual(said((await ask('same-memory', { question })).body.chunks));
    }
  });

  it("never answers one collection's question from another's chunks", async () => {
    expect((await createSearchCollection('other', h)).status).toBe(201);
    const up = await h.upload('other', who.engineer, { name: 'secret.txt', bytes: enc('The vault code ZX-9931 opens the archive.') });
    expect(up.status).toBe(201);
    for (const mode of ['keyword', 'dense', 'hybrid']) {
      const res = await ask('same-search', { question: 'vault code ZX-9931 archive', mode, top_k: 50 });
      expect(res.status).toBe(200);
      expect(res.body.chunks.map((c: { filename: string }) => c.filename)).not.toContain('secret.txt');
    }
    expect((await ask('other', { question: 'ZX-9931', mode: 'keyword' })).body.chunks[0].filename).toBe('secret.txt');
  });

  it('leaves no document half indexed when OpenSearch goes away mid-upload, answers 503 while it is away, and recovers', async () => {
    expect((await createSearchCollection('outage', cutHarness)).status).toBe(201);
    const text = Array.from({ length: 40 }, (_, i) => `Section ${i} of the outage manual: valve OUT-${700 + i} is checked weekly.`).join(
      ' ',
    );
    const file = { name: 'manual.txt', bytes: enc(text), type: 'text/plain' };

    // a bulk request of two chunks is some tens of kilobytes: the cut comes after the first ones went through
    cut.cutAfter(60_000);
    const failed = await cutHarness.upload('outage', who.engineer, file);
    expect(cut.isCut).toBe(true);
    expect(failed.status, JSON.stringify(failed.body)).toBe(502);
    expect(failed.body.detail).toContain('search backend');
    expect((await cutHarness.json('GET', '/collections/outage/documents', who.engineer)).body.documents).toEqual([]);

    for (const mode of ['keyword', 'dense', 'hybrid']) {
      const down = await ask('outage', { question: 'valve OUT-705', mode }, cutHarness);
      expect(down.status).toBe(503);
      expect(down.body.detail).toContain('OpenSearch');
    }

    cut.restore();
    // nothing of the failed upload ranks once OpenSearch is back
    expect((await ask('outage', { question: 'valve OUT-705', mode: 'keyword' }, cutHarness)).body.chunks).toEqual([]);
    const retried = await cutHarness.upload('outage', who.engineer, file);
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const found = await ask('outage', { question: 'valve OUT-705', mode: 'keyword' }, cutHarness);
    expect(found.body.chunks[0].text).toContain('OUT-705');
    // the index holds the retried document's chunks and nothing of the failed one
    const [row] = await h.db.query<{ chunk_store: string }>(`SELECT chunk_store FROM retrieval_collections WHERE slug = 'outage'`);
    await admin.indices.refresh({ index: row!.chunk_store });
    const { body } = await admin.count({ index: row!.chunk_store });
    expect(body.count).toBe(retried.body.chunk_count);
    expect(body.count).toBeGreaterThan(4);
  });
});
