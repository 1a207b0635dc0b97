import type { API } from '@opensearch-project/opensearch';

// The OpenSearch index of one search-backend collection: its analysis, its fields and the two queries asked of it.
// The analyser comes as near to svc's own (keyword-index/analyse.ts) as OpenSearch's filters allow: the same
// tokens, identifiers ("ERR-4471", "user_id", "v2.3.1") kept whole beside their parts, a token holding a digit
// never stemmed, English and French Snowball stems, accents folded, single letters dropped. The differences
// (docs/retrieval.md, "The search backend"): svc detects a text's language and stems and drops stop words in that
// language only, where this index always uses both; and Lucene's BM25 (k1 1.2 and b 0.75 by default, svc's own
// K1 and B) keeps document lengths in one byte.

const TOKEN = String.raw`[\p{L}\p{M}\p{N}]+(?:[-_.@/:][\p{L}\p{M}\p{N}]+)*`;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz'.split('');

type Analysis = NonNullable<NonNullable<API.Indices_Create_RequestBody['settings']>['analysis']>;

const ANALYSIS: Analysis = {
  tokenizer: { svc_tokens: { type: 'pattern', pattern: TOKEN, group: 0 } },
  filter: {
    svc_parts: {
      type: 'word_delimiter_graph',
      preserve_original: true,
      split_on_case_change: false,
      split_on_numerics: false,
      stem_english_possessive: false,
    },
    svc_identifiers: { type: 'keyword_marker', keywords_pattern: String.raw`.*\p{N}.*` },
    svc_stop_en: { type: 'stop', stopwords: '_english_' },
    svc_stop_fr: { type: 'stop', stopwords: '_french_' },
    svc_letters: { type: 'stop', stopwords: LETTERS },
    svc_stem_en: { type: 'snowball', language: 'English' },
    svc_stem_fr: { type: 'snowball', language: 'French' },
    svc_stems: { type: 'multiplexer', filters: ['svc_stem_en', 'svc_stem_fr'], preserve_original: false },
  },
  analyzer: {
    svc_text: {
      type: 'custom',
      tokenizer: 'svc_tokens',
      filter: ['lowercase', 'svc_parts', 'svc_identifiers', 'svc_stop_en', 'svc_stop_fr', 'svc_letters', 'svc_stems', 'asciifolding'],
    },
  },
};

/** The index's settings and fields; `dim` given, the embedding is a k-NN field on Lucene's HNSW. */
export function indexDefinition(opts: { replicas: number; dim: number | undefined }): API.Indices_Create_RequestBody {
  return {
    settings: {
      number_of_shards: 1,
      number_of_replicas: opts.replicas,
      // a document becomes visible by svc's refresh once it is whole, never by the periodic one halfway through
      refresh_interval: '-1',
      ...(opts.dim ? { 'index.knn': true } : {}),
      analysis: ANALYSIS,
    },
    mappings: {
      dynamic: 'strict',
      // the vectors live in the HNSW graph and in Postgres; kept in _source as JSON they would double the index
      _source: { excludes: ['embedding'] },
      properties: {
        document_id: { type: 'keyword' },
        filename: { type: 'keyword' },
        page: { type: 'integer' },
        ordinal: { type: 'integer' },
        // insertion order, the memory backend's own: equal scores rank as they do there
        seq: { type: 'long' },
        text: { type: 'text', analyzer: 'svc_text' },
        created: { type: 'date' },
        ...(opts.dim
          ? {
              embedding: {
                type: 'knn_vector',
                dimension: opts.dim,
                method: { name: 'hnsw', engine: 'lucene', space_type: 'cosinesimil', parameters: { m: 16, ef_construction: 128 } },
              },
            }
          : {}),
      },
    },
  };
}

const inDocuments = (documents: string[] | undefined) => (documents ? [{ terms: { document_id: documents } }] : []);
/** Best first, equal scores in insertion order; ids and scores only (texts are read from Postgres). */
const ranked = (k: number): API.Search_RequestBody => ({
  size: k,
  _source: false,
  track_total_hits: false,
  sort: [{ _score: { order: 'desc' } }, { seq: { order: 'asc' } }],
});

export function keywordQuery(question: string, k: number, documents: string[] | undefined): API.Search_RequestBody {
  return { ...ranked(k), query: { bool: { must: [{ match: { text: question } }], filter: inDocuments(documents) } } };
}

export function knnQuery(vector: readonly number[], k: number, documents: string[] | undefined, efSearch: number): API.Search_RequestBody {
  const filter = documents ? { filter: { bool: { filter: inDocuments(documents) } } } : {};
  const method_parameters = { ef_search: Math.max(k, efSearch) };
  return { ...ranked(k), query: { knn: { embedding: { vector: [...vector], k, method_parameters, ...filter } } } };
}

/** Lucene's cosine score is (1 + cos) / 2: the similarity svc reports, back from it. */
export const cosineOf = (score: number) => 2 * score - 1;
