import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { floatsJson, insertChunks, rankDense, tableOf } from '../../src/retrieval/backends/lake-sql.ts';
import { openPglite } from '../../src/platform/db/index.ts';
import { loadRetrievalConfig } from '../../src/retrieval/config.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// The lake and search backends where no Trino or OpenSearch is needed: choosing the backend, refusing one on a
// service without its engine, and the statements the lake writes (tests/integration/retrieval-lake.test.ts runs them on the real Trino).

describe('collection backends', () => {
  let h: RetrievalHarness;
  let lakeDefault: RetrievalHarness;
  beforeAll(async () => {
    h = await retrievalHarness(await openPglite({}));
    lakeDefault = await retrievalHarness(await openPglite({}), { env: { SVC_RAG_DEFAULT_BACKEND: 'lake' } });
  }, 240_000);
  afterAll(async () => {
    await h?.close();
    await lakeDefault?.close();
  });

  it('creates a memory collection when the request names no backend, and says so', async () => {
    const res = await h.json('POST', '/collections', who.engineer, { slug: 'plain', name: 'Plain', allowed_roles: [] });
    expect(res.status).toBe(201);
    expect(res.body.backend).toBe('memory');
    expect((await h.json('GET', '/collections', who.engineer)).body.collections[0].backend).toBe('memory');
  });

  it('refuses a lake collection asked of a service without Trino with 400 naming SVC_TRINO_URL, and writes nothing', async () => {
    const res = await h.json('POST', '/collections', who.engineer, { slug: 'on-lake', name: 'Lake', allowed_roles: [], backend: 'lake' });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/SVC_TRINO_URL/);
    expect((await h.json('GET', '/collections/on-lake', who.engineer)).status).toBe(404);
  });

  it('takes the default from SVC_RAG_DEFAULT_BACKEND, and `memory` still on request', async () => {
    const lake = await lakeDefault.json('POST', '/collections', who.engineer, { slug: 'by-default', name: 'D', allowed_roles: [] });
    expect(lake.status).toBe(503);
    expect(lake.body.detail).toMatch(/SVC_TRINO_URL/);
    const memory = await lakeDefault.json('POST', '/collections', who.engineer, {
      slug: 'asked',
      name: 'A',
      allowed_roles: [],
      backend: 'memory',
    });
    expect(memory.status).toBe(201);
  });

  it('refuses a search collection on a service without OpenSearch: 400 asked by name, 503 by default', async () => {
    const res = await h.json('POST', '/collections', who.engineer, { slug: 'found', name: 'S', allowed_roles: [], backend: 'search' });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/SVC_OPENSEARCH_URL/);
    expect(res.body.detail).toMatch(/"backend": "memory"/);
    expect((await h.json('GET', '/collections/found', who.engineer)).status).toBe(404);
    const searchDefault = await retrievalHarness(h.db, { env: { SVC_RAG_DEFAULT_BACKEND: 'search' } });
    try {
      const byDefault = await searchDefault.json('POST', '/collections', who.engineer, { slug: 'found', name: 'S', allowed_roles: [] });
      expect(byDefault.status).toBe(503);
      expect(byDefault.body.detail).toMatch(/SVC_OPENSEARCH_URL/);
    } finally {
      await searchDefault.close();
    }
    expect(() => loadRetrievalConfig({ SVC_RAG_SEARCH_INDEX_PREFIX: 'Svc Chunks' })).toThrow(/RAG_SEARCH_INDEX_PREFIX/);
  });

  it('refuses an unknown backend with 400 naming the field', async () => {
    const res = await h.json('POST', '/collections', who.engineer, { slug: 'odd', name: 'Odd', allowed_roles: [], backend: 'disk' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.errors)).toMatch(/backend/);
  });

  it('refuses an invalid SVC_RAG_DEFAULT_BACKEND at start-up, naming it', () => {
    expect(() => loadRetrievalConfig({ SVC_RAG_DEFAULT_BACKEND: 'disk' })).toThrow(/RAG_DEFAULT_BACKEND/);
  });
});

describe('lake statements', () => {
  it('writes float32 values that read back as the same float32 values, in fewer characters when it can', () => {
    const values = Float32Array.from([0.1, -1 / 3, 1e-8, 123456.789, 0, 2 ** -126]);
    const json = floatsJson(values);
    expect(Float32Array.from(JSON.parse(json) as number[])).toEqual(values);
    expect(json.length).toBeLessThan(values.reduce((n, v) => n + String(v).length + 1, 1));
    expect(() => floatsJson(Float32Array.from([Number.NaN]))).toThrow(/NaN/);
  });

  it('writes one INSERT for a batch of chunks, quoting text and names', () => {
    const fqn = tableOf('iceberg.retrieval', 'a_b_1234');
    expect(fqn).toBe('"iceberg"."retrieval"."a_b_1234"');
    const sql = insertChunks(fqn, { id: 'd1', filename: "o'brien.txt" }, [
      { id: 'c1', seq: 7, ordinal: 0, page: 1, text: "it's", embedding: Float32Array.from([1, 0]) },
      { id: 'c2', seq: 8, ordinal: 1, page: 2, text: 'two', embedding: Float32Array.from([0, 1]) },
    ]);
    expect(sql.match(/INSERT INTO/g)).toHaveLength(1);
    expect(sql).toContain("'o''brien.txt'");
    expect(sql).toContain("'it''s'");
  });

  it('ranks by cosine distance with ties in insertion order, and a zero question as the memory backend does', () => {
    expect(rankDense('"t"', [0.5, 0.5], 3)).toMatch(/cosine_distance\(embedding, .*\) AS d FROM "t"\s+ORDER BY d, seq LIMIT 3$/);
    expect(rankDense('"t"', [0, 0], 3)).not.toMatch(/cosine_distance/);
    expect(rankDense('"t"', [1, 0], 3, ["x'"])).toContain("WHERE document_id IN ('x''')");
  });
});
