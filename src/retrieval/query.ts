import { badRequest, notFound, unprocessable } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import { describeSpan, inRequestTrace, inTracedSpan, tracer } from '../platform/tracing.ts';
import { requireQueryable } from './access.ts';
import type { RetrievalDeps } from './deps.ts';
import { backendOf, type ChunkBackend, type DenseList } from './backends/index.ts';
import { auditedFilter, narrowTo, type DocumentFilter } from './filter.ts';
import { fuse, single, type Fused, type Scored } from './fuse.ts';
import * as store from './store.ts';

export const QUERY_MODES = ['hybrid', 'dense', 'keyword'] as const;
export type QueryMode = (typeof QUERY_MODES)[number];

export type QueryInput = {
  question: string;
  top_k?: number | undefined;
  mode?: QueryMode | undefined;
  /** Narrows the documents ranked, after the policy let the caller query the collection. */
  filter?: DocumentFilter | undefined;
};

export type ChunkResult = {
  chunk_id: string;
  document_id: string;
  filename: string;
  page: number;
  text: string;
  /** Cosine similarity (dense), BM25 (keyword) or the reciprocal-rank-fused score (hybrid). */
  score: number;
  /** Rank in the dense and keyword candidate lists; null where that list did not hold the chunk. */
  dense_rank: number | null;
  keyword_rank: number | null;
};

export type QueryResponse = {
  question: string;
  collection: string;
  chunks: ChunkResult[];
  /** False where an approximate index (the search backend's k-NN) made the dense ranking. */
  exact: boolean;
  latency_ms: number;
};

/** The collection ranked, where its chunks are, and the documents a filter keeps (undefined: all of them). */
type Head = { slug: string; backend: ChunkBackend; documents: string[] | undefined };

/**
 * Ranks the collection's chunks for the question, by cosine similarity of embeddings (dense), BM25 over terms
 * (keyword), or both fused by reciprocal rank (hybrid, the default), and records the retrieval.
 */
export async function queryCollection(
  deps: RetrievalDeps,
  caller: Caller,
  slug: string,
  input: QueryInput,
  requestId?: string,
): Promise<QueryResponse> {
  if (requestId === undefined) return rankAndRecord(deps, caller, slug, input);
  // one trace a request: what it ranked is its output, the chunks' texts stay out (the audit record has them)
  return inRequestTrace(
    spans,
    'retrieval.query',
    { user: caller.user, requestId },
    { collection: slug, question: input.question, top_k: input.top_k, mode: input.mode, filter: input.filter },
    () => rankAndRecord(deps, caller, slug, input),
    (r) => ({ exact: r.exact, chunks: r.chunks.map(rankedChunk) }),
  );
}

async function rankAndRecord(deps: RetrievalDeps, caller: Caller, slug: string, input: QueryInput): Promise<QueryResponse> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  const topK = input.top_k ?? deps.config.DEFAULT_TOP_K;
  const record = (chunks: Audited[]) =>
    recordRetrieval(deps, caller, {
      collection: slug,
      question: input.question,
      top_k: topK,
      chunks,
      latency_ms: elapsed(),
      filter: input.filter,
    });
  // the audit record is written once the ranking is known, beside the read of the ranked chunks' text (which it does
  // not need); the answer waits for both, so a failed audit still fails the request
  let audit: Promise<number> | undefined;
  const { chunks, mode, exact } = await retrieveChunks(deps, caller, slug, input, (ranked) => {
    audit = record(ranked.map((r) => ({ chunk_id: r.id, score: r.score })));
    audit.catch(() => undefined); // awaited below, unless the retrieval fails first
  });
  const latency_ms = elapsed();
  await (audit ?? record(chunks));
  deps.metrics.queries.inc({ outcome: 'ok' });
  deps.metrics.queryDuration.observe({ mode }, latency_ms / 1000);
  return { question: input.question, collection: slug, chunks, exact, latency_ms };
}

export type Retrieved = {
  chunks: ChunkResult[];
  topK: number;
  mode: QueryMode;
  /** Cosine similarity to the question of the chunks the dense ranking held (not those only keyword ranking found). */
  similarity: ReadonlyMap<string, number>;
  /** False where an approximate index made the dense ranking. */
  exact: boolean;
};

/**
 * The retrieval itself, unrecorded: the ceiling, the collection, the policy, the ranking (the caller records it).
 * `ranked` hears the ranking (ids and scores, best first) once it is known, before the ranked chunks' text is read
 * (not when a filter kept no document: nothing is ranked then).
 */
export async function retrieveChunks(
  deps: RetrievalDeps,
  caller: Caller,
  slug: string,
  input: QueryInput,
  ranked?: (ranking: readonly Fused[]) => void,
): Promise<Retrieved> {
  const topK = input.top_k ?? deps.config.DEFAULT_TOP_K;
  const mode = input.mode ?? 'hybrid';
  if (topK > deps.config.MAX_TOP_K) {
    throw badRequest(`top_k ${topK} is above the ceiling of ${deps.config.MAX_TOP_K} (SVC_MAX_TOP_K).`, {
      errors: [{ location: 'json.top_k', message: `must be at most ${deps.config.MAX_TOP_K}` }],
    });
  }
  const head = await store.collectionHead(deps.db, slug);
  if (!head) throw notFound(`Collection '${slug}' does not exist.`);
  await requireQueryable(deps, caller, head);
  // the policy first, then the filter narrows what is ranked (a filter keeping nothing ranks nothing)
  const collection: Head = { slug, backend: backendOf(deps, head), documents: await narrowTo(deps, slug, input.filter) };

  const similarity = new Map<string, number>();
  const ranking = { exact: true };
  const chunks = await inTracedSpan(
    spans,
    'retrieval.rank',
    async (span) => {
      describeSpan(span, { inputs: { question: input.question, top_k: topK, mode } });
      const chunks =
        collection.documents?.length === 0
          ? []
          : mode === 'dense'
            ? await denseOnly(deps, caller, collection, input.question, topK, similarity, ranking, ranked)
            : mode === 'keyword'
              ? await withText(
                  caller,
                  collection,
                  single(await keywordList(deps, caller, collection, input.question, topK), 'keyword'),
                  undefined,
                  ranked,
                )
              : await hybrid(deps, caller, collection, input.question, topK, similarity, ranking, ranked);
      // as MLflow shows retrieved documents; the trace is the caller's own, who may read these chunks
      describeSpan(span, { outputs: chunks.map(retrievedDocument) });
      return chunks;
    },
    'RETRIEVER',
  );
  return { chunks, topK, mode, similarity, exact: ranking.exact };
}

const spans = tracer('retrieval');
/** A ranked chunk as a request's outputs show it: where it is and how it ranked (its text is the rank span's). */
const rankedChunk = (c: ChunkResult) => ({ chunk_id: c.chunk_id, document_id: c.document_id, score: c.score });
const retrievedDocument = (c: ChunkResult) => ({
  id: c.chunk_id,
  page_content: c.text,
  metadata: { document_id: c.document_id, filename: c.filename, page: c.page, score: c.score },
});

/** What an audit record keeps of each chunk given. */
type Audited = Pick<ChunkResult, 'chunk_id' | 'score'>;

/**
 * The retrieval's audit record (its id returned); an answer adds what it answered (`answer`). A query's record is
 * written from its ranking, beside the read of the chunks' text: `latency_ms` is the time to the ranking, and a chunk
 * deleted between its ranking and that read is named though the answer leaves it out.
 */
export async function recordRetrieval(
  deps: RetrievalDeps,
  caller: Caller,
  r: {
    collection: string;
    question: string;
    top_k: number;
    chunks: readonly Audited[];
    latency_ms: number;
    filter?: DocumentFilter | undefined;
    answer?: store.AnswerRecord;
  },
): Promise<number> {
  const filter = auditedFilter(r.filter);
  return store.insertAudit(deps.db, {
    user_id: caller.user,
    roles: caller.roles,
    collection: r.collection,
    question: r.question,
    top_k: r.top_k,
    chunk_ids: r.chunks.map((c) => c.chunk_id),
    scores: r.chunks.map((c) => c.score),
    latency_ms: r.latency_ms,
    ...(filter ? { filter } : {}),
    ...(r.answer ? { answer: r.answer } : {}),
  });
}

/** Each list offers this many candidates to the fusion, however few chunks are asked for. */
const candidates = (deps: RetrievalDeps, topK: number) => Math.max(topK, deps.config.HYBRID_CANDIDATES);

async function hybrid(
  deps: RetrievalDeps,
  caller: Caller,
  collection: Head,
  question: string,
  topK: number,
  similarity: Map<string, number>,
  ranking: { exact: boolean },
  ranked?: (ranking: readonly Fused[]) => void,
): Promise<ChunkResult[]> {
  const depth = candidates(deps, topK);
  // the dense candidates without their text: only the fused top k are read back
  const [dense, keyword] = await Promise.all([
    denseList(deps, caller, collection, question, depth, 'ids'),
    keywordList(deps, caller, collection, question, depth),
  ]);
  for (const hit of dense.hits) similarity.set(hit.id, hit.score);
  ranking.exact = dense.exact;
  return withText(caller, collection, fuse(dense.hits, keyword, topK), dense.rows, ranked);
}

async function denseOnly(
  deps: RetrievalDeps,
  caller: Caller,
  collection: Head,
  question: string,
  topK: number,
  similarity: Map<string, number>,
  ranking: { exact: boolean },
  ranked?: (ranking: readonly Fused[]) => void,
): Promise<ChunkResult[]> {
  const dense = await denseList(deps, caller, collection, question, topK, 'chunks');
  for (const hit of dense.hits) similarity.set(hit.id, hit.score);
  ranking.exact = dense.exact;
  return withText(caller, collection, single(dense.hits, 'dense'), dense.rows, ranked);
}

/**
 * The dense candidates, from the collection's backend. With `read` 'chunks' they come with their rows (text,
 * document), kept so they are not read twice; with 'ids' the backend may answer only their ids and scores.
 */
async function denseList(
  deps: RetrievalDeps,
  caller: Caller,
  collection: Head,
  question: string,
  k: number,
  read: 'chunks' | 'ids',
): Promise<DenseList> {
  const [vector] = await embedQuestion(deps, question);
  return collection.backend.dense(caller, vector!, k, { documents: collection.documents, read });
}

async function keywordList(deps: RetrievalDeps, caller: Caller, collection: Head, question: string, k: number): Promise<Scored[]> {
  const ranked = await collection.backend.keyword(caller, question, k, { documents: collection.documents });
  if (ranked === 'too-large') {
    deps.metrics.queries.inc({ outcome: 'too_large_for_keyword' });
    throw unprocessable(
      `Collection '${collection.slug}' holds more chunks than keyword ranking keeps in memory ` +
        `(SVC_RAG_KEYWORD_INDEX_MAX_CHUNKS=${deps.config.RAG_KEYWORD_INDEX_MAX_CHUNKS}): ask with "mode": "dense", or ask the operator to raise the setting.`,
    );
  }
  return ranked;
}

async function embedQuestion(deps: RetrievalDeps, question: string): Promise<number[][]> {
  try {
    return await deps.embedder.embed([question]);
  } catch (err) {
    deps.metrics.queries.inc({ outcome: 'embedding_failed' });
    throw err;
  }
}

/**
 * One read of the ranked chunks with their documents; a chunk deleted since it was ranked drops out. `heard` is told
 * the ranking first.
 */
async function withText(
  caller: Caller,
  collection: Head,
  ranked: Fused[],
  known = new Map<string, store.ChunkHit>(),
  heard?: (ranking: readonly Fused[]) => void,
): Promise<ChunkResult[]> {
  heard?.(ranked);
  if (ranked.length === 0) return [];
  const missing = ranked.filter((r) => !known.has(r.id)).map((r) => r.id);
  const read = missing.length === 0 ? [] : await collection.backend.chunksByIds(caller, missing);
  const rows = new Map([...known, ...read.map((r) => [r.id, r] as const)]);
  return ranked.flatMap((r) => {
    const row = rows.get(r.id);
    return row ? [toResult(row, r)] : [];
  });
}

const toResult = (row: store.ChunkHit, r: Fused): ChunkResult => ({
  chunk_id: row.id,
  document_id: row.document_id,
  filename: row.filename,
  page: row.page,
  text: row.text,
  score: r.score,
  dense_rank: r.dense_rank,
  keyword_rank: r.keyword_rank,
});
