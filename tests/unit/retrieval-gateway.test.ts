import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createOpenAiEmbedder } from '../../src/platform/gateway/index.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// Embeddings through a real OpenAI-compatible HTTP server and the real openai SDK: retries, the 502 when the
// gateway keeps failing, and nothing half-written behind.
describe('retrieval with an embedding gateway', () => {
  let gw: ScriptedGateway;
  let db: Database;
  let h: RetrievalHarness;
  // a collection stores one document per content: each upload here is a different file
  let uploads = 0;
  const file = () => ({
    name: 'doc.txt',
    bytes: new TextEncoder().encode(`gateway backed embedding of a small document, copy ${++uploads}`),
  });

  beforeAll(async () => {
    gw = await startScriptedGateway();
    db = await openPglite({});
    h = await retrievalHarness(db, {
      embedder: createOpenAiEmbedder({ baseURL: gw.url, model: 'svc-embed', dim: 768, backoffMs: 5 }),
    });
    await h.json('POST', '/collections', who.engineer, { slug: 'gw', name: 'Gateway', allowed_roles: [] });
  });
  afterAll(async () => {
    await h.close();
    await db.close();
    await gw.close();
  });

  const counts = async () => (await h.json('GET', '/collections/gw', who.admin)).body;

  it('embeds uploads and questions with the configured model', async () => {
    const up = await h.upload('gw', who.engineer, file());
    expect(up.status).toBe(201);
    const q = await h.json('POST', '/collections/gw/query', who.user, { question: 'embedding of a document' });
    expect(q.body.chunks).toHaveLength(1);
    const embeds = gw.requests.filter((r) => r.path === '/v1/embeddings');
    expect(embeds.map((r) => r.body.model)).toEqual(['svc-embed', 'svc-embed']);
    expect(embeds[1]!.body.input).toEqual(['embedding of a document']);
  });

  it('retries a failing gateway and succeeds within three attempts', async () => {
    gw.failNext('/v1/embeddings', 503, 2);
    expect((await h.upload('gw', who.engineer, file())).status).toBe(201);
  });

  it('answers 502 after three failed attempts and stores nothing', async () => {
    const before = await counts();
    const calls = gw.requests.length;
    gw.failNext('/v1/embeddings', 503, 3);
    const res = await h.upload('gw', who.engineer, file());
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/nothing was stored/);
    expect(gw.requests.length - calls).toBe(3);
    const after = await counts();
    expect([after.document_count, after.chunk_count]).toEqual([before.document_count, before.chunk_count]);
  });

  it('answers 502 when the question cannot be embedded, and records no retrieval', async () => {
    const audits = (await h.json('GET', '/audit/queries?limit=100', who.admin)).body.queries.length;
    gw.failNext('/v1/embeddings', 500, 3);
    const res = await h.json('POST', '/collections/gw/query', who.user, { question: 'anything' });
    expect(res.status).toBe(502);
    expect((await h.json('GET', '/audit/queries?limit=100', who.admin)).body.queries.length).toBe(audits);
  });

  it('exposes request and ingestion counters and the query latency histogram', async () => {
    const text = await (await h.app.request('/metrics')).text();
    expect(text).toMatch(/retrieval_documents_ingested_total\{[^}]*outcome="indexed"[^}]*\} 2/);
    expect(text).toMatch(/retrieval_documents_ingested_total\{[^}]*outcome="failed"[^}]*\} 1/);
    expect(text).toMatch(/retrieval_query_duration_seconds_count\{[^}]*\} 1/);
    expect(text).toMatch(/http_requests_total\{[^}]*route="\/collections\/:slug\/query"/);
  });
});
