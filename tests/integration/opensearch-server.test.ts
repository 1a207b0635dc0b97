import { readFileSync } from 'node:fs';
import { Client } from '@opensearch-project/opensearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSearchSettings, type OpenSearchSettings } from '../support/opensearch.ts';

// The OpenSearch that scripts/start-opensearch.sh starts is what the search backend (issue 35) builds on: TLS and
// a user for svc that reaches its own indices only, the english and french analysers of the analysis-common
// module, and k-NN on Lucene's HNSW from the plugin zip (which carries no native engine).
describe('the OpenSearch of scripts/start-opensearch.sh', () => {
  let settings: OpenSearchSettings;
  let svc: Client;
  const index = `svc-probe-${Date.now().toString(36)}`;

  beforeAll(async () => {
    settings = await openSearchSettings();
    svc = new Client({
      node: settings.url,
      auth: { username: settings.user, password: settings.password },
      ssl: { ca: readFileSync(settings.ca) },
    });
    await svc.indices.create({
      index,
      body: {
        settings: { 'index.knn': true, number_of_replicas: 0 },
        mappings: {
          properties: {
            en: { type: 'text', analyzer: 'english' },
            fr: { type: 'text', analyzer: 'french' },
            embedding: { type: 'knn_vector', dimension: 3, method: { name: 'hnsw', engine: 'lucene', space_type: 'cosinesimil' } },
          },
        },
      },
    });
    await svc.bulk({
      refresh: true,
      body: [
        { index: { _index: index, _id: 'a' } },
        { en: 'The runners were running past the stations', fr: 'Les coureurs couraient vers les gares', embedding: [1, 0, 0] },
        { index: { _index: index, _id: 'b' } },
        { en: 'A quiet library of old books', fr: 'Une bibliothèque calme de vieux livres', embedding: [0, 1, 0] },
      ],
    });
  }, 600_000);
  afterAll(async () => {
    await svc?.indices.delete({ index }).catch(() => undefined);
    await svc?.close();
  });

  it('answers over TLS only, and to svc only with its password', async () => {
    const plain = settings.url.replace('https:', 'http:');
    await expect(fetch(`${plain}/_cluster/health`, { signal: AbortSignal.timeout(5_000) })).rejects.toThrow();
    const wrong = new Client({ node: settings.url, auth: { username: 'svc', password: 'wrong' }, ssl: { ca: readFileSync(settings.ca) } });
    await expect(wrong.cluster.health()).rejects.toMatchObject({ meta: { statusCode: 401 } });
    await wrong.close();
  });

  it('keeps svc to the svc-* indices', async () => {
    await expect(svc.search({ index: '.opendistro_security' })).rejects.toMatchObject({ meta: { statusCode: 403 } });
    await expect(svc.indices.create({ index: 'other-team' })).rejects.toMatchObject({ meta: { statusCode: 403 } });
  });

  it('stems english and french words to the forms of the indexed text', async () => {
    const match = async (field: string, text: string) =>
      (await svc.search({ index, body: { query: { match: { [field]: text } } } })).body.hits.hits.map((h) => h._id);
    expect(await match('en', 'runs station')).toEqual(['a']);
    expect(await match('fr', 'coureur gare')).toEqual(['a']);
    expect(await match('en', 'book')).toEqual(['b']);
  });

  it('ranks by k-NN on the Lucene engine', async () => {
    const { body } = await svc.search({ index, body: { size: 2, query: { knn: { embedding: { vector: [0.1, 0.9, 0], k: 2 } } } } });
    expect(body.hits.hits.map((h) => h._id)).toEqual(['b', 'a']);
  });
});
