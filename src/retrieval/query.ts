import { badGateway, badRequest, notFound } from '../platform/errors.ts';
import { GatewayError } from '../platform/gateway/index.ts';
import type { Caller } from '../platform/identity.ts';
import { requireQueryable } from './access.ts';
import type { RetrievalDeps } from './deps.ts';
import * as store from './store.ts';

export type QueryInput = { question: string; top_k?: number | undefined };

export type ChunkResult = {
  chunk_id: string;
  document_id: string;
  filename: string;
  page: number;
  text: string;
  score: number;
};

export type QueryResponse = { question: string; collection: string; chunks: ChunkResult[]; latency_ms: number };

/** Embeds the question with the collection's model, ranks exactly by cosine, records the retrieval. */
export async function queryCollection(
  deps: RetrievalDeps,
  caller: Caller,
  slug: string,
  input: QueryInput,
): Promise<QueryResponse> {
  const started = performance.now();
  const topK = input.top_k ?? deps.config.DEFAULT_TOP_K;
  if (topK > deps.config.MAX_TOP_K) {
    throw badRequest(`top_k ${topK} is above the ceiling of ${deps.config.MAX_TOP_K} (SVC_MAX_TOP_K).`, {
      errors: [{ location: 'json.top_k', message: `must be at most ${deps.config.MAX_TOP_K}` }],
    });
  }
  const collection = await store.collectionHead(deps.db, slug);
  if (!collection) throw notFound(`Collection '${slug}' does not exist.`);
  await requireQueryable(deps, caller, collection);

  const [vector] = await embedQuestion(deps, input.question);
  const chunks = await rank(deps, slug, collection.version, vector!, topK);
  const latency_ms = Math.round((performance.now() - started) * 100) / 100;

  await store.insertAudit(deps.db, {
    user_id: caller.user,
    roles: caller.roles,
    collection: slug,
    question: input.question,
    top_k: topK,
    chunk_ids: chunks.map((c) => c.chunk_id),
    scores: chunks.map((c) => c.score),
    latency_ms,
  });
  deps.metrics.queries.inc({ outcome: 'ok' });
  deps.metrics.queryDuration.observe(latency_ms / 1000);
  return { question: input.question, collection: slug, chunks, latency_ms };
}

async function embedQuestion(deps: RetrievalDeps, question: string): Promise<number[][]> {
  try {
    return await deps.embedder.embed([question]);
  } catch (err) {
    deps.metrics.queries.inc({ outcome: 'embedding_failed' });
    if (err instanceof GatewayError) throw badGateway(`Could not embed the question: ${err.message}`);
    throw err;
  }
}

/** The in-memory index answers up to its size limit; past it, pgvector's exact scan does. */
async function rank(deps: RetrievalDeps, slug: string, version: number, vector: number[], k: number): Promise<ChunkResult[]> {
  const ranked = await deps.indexes.rank(deps.db, slug, version, vector, k);
  const hits = ranked === 'too-large' ? await store.rankByPgvector(deps.db, slug, vector, k) : ranked;
  return hits.map((h) => toResult(h, h.score));
}

const toResult = (row: store.ChunkHit, score: number): ChunkResult => ({
  chunk_id: row.id,
  document_id: row.document_id,
  filename: row.filename,
  page: row.page,
  text: row.text,
  score,
});
