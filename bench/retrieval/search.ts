// The search backend (issue 35) against the memory backend, in one run on real Postgres and the integration
// OpenSearch (scripts/start-opensearch.sh; tests/support/opensearch.ts reads its settings and starts it if need be):
//   ingestion: the same text documents uploaded through svc's upload path (extract, chunk, embed, write the rows, and
//     on the search backend the bulk writes and one refresh a document) to a memory collection and to a search one,
//     document by document in turns (which goes first alternating), so a busy machine slows both alike: chunks/s;
//   queries: the same questions in dense, keyword and hybrid mode, each asked of the memory collection and of the
//     search one in turn, through svc's query path (the question's embedding excluded): p50 and p99, search/memory;
//   k-NN recall@10: the search backend's dense top 10 (OpenSearch's Lucene HNSW, `exact: false`) against the memory
//     backend's (exact); and the keyword top 10's overlap between the two BM25s; then the same dense questions asked
//     of the index directly at each `--ef-search` value (the recall a larger ef_search would give svc).
// Both collections are built by the run in a fresh database and a fresh index prefix, and dropped at its end: the
// point is to time their ingestion, so there is nothing to keep. Chunks and vectors: search-data.ts.
// Run: npx tsx bench/retrieval/index.ts --backend search [--sizes 100000] [--dists random,clustered] [--queries 200]
//        [--chunks-per-document 100] [--ef-search 100,400]
import { availableParallelism, loadavg } from 'node:os';
import { openPostgres, type Database } from '../../src/platform/db/index.ts';
import type { Embedder } from '../../src/platform/gateway/index.ts';
import { queryCollection } from '../../src/retrieval/query.ts';
import { searchEnv } from '../../tests/support/opensearch.ts';
import { freshDatabase } from '../../tests/support/pg.ts';
import { retrievalHarness, type RetrievalHarness, who } from '../../tests/support/retrieval.ts';
import { DIM, type Distribution } from './datasets.ts';
import { pct, question, time } from './questions.ts';
import { chunkText, queryVector, vectorOf, WORDS } from './search-data.ts';

const K = 10;
const admin = { user: 'bench', roles: ['svc-admin'], groups: [] };
const MODES = ['dense', 'keyword', 'hybrid'] as const;
type Mode = (typeof MODES)[number];
const BACKENDS = ['memory', 'search'] as const;
type Backend = (typeof BACKENDS)[number];

export type SearchBenchOptions = {
  sizes: number[];
  dists: Distribution[];
  queries: number;
  chunksPerDocument: number;
  /** ef_search values to ask OpenSearch's k-NN with directly (not through svc), for the recall a setting would give. */
  efSearch: number[];
};

export async function benchSearchBackend(opts: SearchBenchOptions): Promise<void> {
  const loadBefore = loadavg()[0]!;
  const reports: string[] = [];
  for (const n of opts.sizes) for (const dist of opts.dists) reports.push(...(await benchOne(dist, n, opts)));
  console.log(
    `\nload average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end, on ${availableParallelism()} cores`,
  );
  console.log(reports.join('\n'));
}

async function benchOne(dist: Distribution, n: number, opts: SearchBenchOptions): Promise<string[]> {
  const fresh = await freshDatabase('bench_search');
  const db = openPostgres({ ...fresh.cfg, max: 4 });
  const search = await searchEnv();
  // what the embedder answers: a question's vector, and the chunks' of the document being uploaded
  const vectors = new Map<string, number[]>();
  for (let i = 0; i < opts.queries; i++) {
    vectors.set(String(i), queryVector(dist, i));
    vectors.set(question(i), queryVector(dist, i));
  }
  const embedder: Embedder = {
    model: 'bench',
    dim: DIM,
    offline: true,
    embed: async (texts) =>
      texts.map((t) => {
        const v = vectors.get(t);
        if (!v) throw new Error(`the bench embedder has no vector for "${t.slice(0, 40)}…"`);
        return v;
      }),
  };
  const h = await retrievalHarness(db, {
    embedder,
    conformance: false,
    env: {
      ...search.env,
      SVC_RAG_MEMORY_INDEX_MAX_CHUNKS: String(Math.max(n, 1_000_000)),
      SVC_RAG_KEYWORD_INDEX_MAX_CHUNKS: String(Math.max(n, 1_000_000)),
      // a chunk is one document's WORDS words exactly: chunk i of the run is chunkText(i) on both backends
      SVC_CHUNK_SIZE_TOKENS: String(WORDS),
      SVC_CHUNK_OVERLAP_TOKENS: '0',
    },
  });
  try {
    for (const backend of BACKENDS) {
      const r = await h.json('POST', '/collections', who.engineer, { slug: backend, name: backend, allowed_roles: [], backend });
      if (r.status !== 201) throw new Error(`creating the ${backend} collection: ${JSON.stringify(r.body)}`);
    }
    const ingestion = await ingest(h, vectors, dist, n, opts.chunksPerDocument);
    const queries = await ask(h, db, opts.queries, opts.chunksPerDocument);
    const index = await indexFacts(h);
    const probes = index.knn ? await efProbes(h, index.name, `${dist} ${n}`, dist, queries, opts) : [];
    return [...report(dist, n, opts, ingestion, queries, index), ...probes];
  } finally {
    await h.close();
    await search.dropIndexes();
    await db.close();
    await fresh.drop();
  }
}

type Ingestion = { documents: number; chunks: number; ms: Record<Backend, number> };

/** The documents uploaded to both collections in turns; each upload's time is the whole HTTP call. */
async function ingest(
  h: RetrievalHarness,
  vectors: Map<string, number[]>,
  dist: Distribution,
  n: number,
  perDocument: number,
): Promise<Ingestion> {
  const documents = Math.ceil(n / perDocument);
  const ms: Record<Backend, number> = { memory: 0, search: 0 };
  const started = performance.now();
  let chunks = 0;
  for (let d = 0; d < documents; d++) {
    const texts: string[] = [];
    for (let i = d * perDocument; i < Math.min(n, (d + 1) * perDocument); i++) {
      const text = chunkText(i);
      texts.push(text);
      vectors.set(text, vectorOf(dist, i));
    }
    const bytes = new TextEncoder().encode(texts.join('\n'));
    for (const backend of d % 2 === 0 ? BACKENDS : ([...BACKENDS].reverse() as Backend[])) {
      const [t, r] = await time(() => h.upload(backend, who.engineer, { name: `d${d}.txt`, type: 'text/plain', bytes }));
      if (r.status !== 201 || r.body.chunk_count !== texts.length)
        throw new Error(`uploading d${d}.txt to ${backend}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      ms[backend] += t;
    }
    for (const text of texts) vectors.delete(text);
    chunks += texts.length;
    if ((d + 1) % Math.max(1, Math.floor(documents / 10)) === 0)
      console.log(
        `${dist} ${n}: ${chunks} chunks in both, ${((performance.now() - started) / 1000).toFixed(0)} s (memory ${(chunks / (ms.memory / 1000)).toFixed(0)}, search ${(chunks / (ms.search / 1000)).toFixed(0)} chunks/s)`,
      );
  }
  return { documents, chunks, ms };
}

type Answers = {
  ms: Record<Mode, Record<Backend, number[]>>;
  top: Record<Mode, Record<Backend, string[][]>>;
  exact: Record<Backend, boolean>;
  /** Chunk id to chunk number (document × chunks a document + ordinal), the same on both collections. */
  positions: Map<string, number>;
};

/** Each question in each mode, the memory collection then the search one; answers as "document:ordinal". */
async function ask(h: RetrievalHarness, db: Database, queries: number, perDocument: number): Promise<Answers> {
  const positions = new Map(
    (
      await db.query<{ id: string; filename: string; ordinal: number }>(
        `SELECT c.id::text AS id, d.filename, c.ordinal FROM retrieval_chunks c JOIN retrieval_documents d ON d.id = c.document_id`,
      )
    ).map((r) => [r.id, Number(r.filename.slice(1, -4)) * perDocument + r.ordinal]),
  );
  const empty = <T>(make: () => T) =>
    Object.fromEntries(MODES.map((m) => [m, { memory: make(), search: make() }])) as Record<Mode, Record<Backend, T>>;
  const answers: Answers = { ms: empty(() => []), top: empty(() => []), exact: { memory: true, search: true }, positions };
  const once = async (backend: Backend, mode: Mode, q: string) => {
    const [t, r] = await time(() => queryCollection(h.deps, admin, backend, { question: q, top_k: K, mode }));
    return { t, r };
  };
  // the first questions load the memory backend's copies (dense and BM25) and warm OpenSearch's caches: not timed
  for (const backend of BACKENDS) for (const mode of MODES) await once(backend, mode, mode === 'dense' ? '0' : question(0));
  for (let i = 0; i < queries; i++)
    for (const mode of MODES)
      for (const backend of BACKENDS) {
        const { t, r } = await once(backend, mode, mode === 'dense' ? String(i) : question(i));
        answers.ms[mode][backend].push(t);
        answers.top[mode][backend].push(r.chunks.map((c) => String(positions.get(c.chunk_id))));
        if (mode === 'dense') answers.exact[backend] &&= r.exact;
      }
  return answers;
}

/** The search collection's index as OpenSearch reports it: documents, size, segments. */
async function indexFacts(h: RetrievalHarness) {
  const client = h.deps.search!.client;
  const [{ chunk_store }] = (await h.db.query<{ chunk_store: string }>(
    `SELECT chunk_store FROM retrieval_collections WHERE slug = 'search'`,
  )) as [{ chunk_store: string }];
  const { body } = await client.cat.indices({ index: chunk_store, format: 'json', bytes: 'mb' });
  const [row] = body as { 'docs.count'?: string; 'store.size'?: string }[];
  const { body: segments } = await client.cat.segments({ index: chunk_store, format: 'json' });
  return {
    name: chunk_store,
    docs: Number(row?.['docs.count']),
    mb: Number(row?.['store.size']),
    segments: (segments as unknown[]).length,
    knn: await h.deps.search!.knn(),
  };
}

const overlap = (got: string[][], want: string[][]) =>
  got.reduce((s, a, i) => s + a.filter((x) => want[i]!.includes(x)).length, 0) /
  Math.max(
    1,
    want.reduce((s, w) => s + Math.min(K, w.length), 0),
  );

function report(
  dist: Distribution,
  n: number,
  opts: SearchBenchOptions,
  ingestion: Ingestion,
  answers: Answers,
  index: Awaited<ReturnType<typeof indexFacts>>,
): string[] {
  const ms = (x: number) => x.toFixed(2).padStart(8);
  const rate = (b: Backend) => ingestion.chunks / (ingestion.ms[b] / 1000);
  const label = `${dist} ${n}`.padEnd(16);
  const notes: Record<Mode, string> = {
    dense: index.knn
      ? `recall@10 of search's k-NN against memory's exact top 10: ${overlap(answers.top.dense.search, answers.top.dense.memory).toFixed(3)} (exact: ${answers.exact.search})`
      : `no k-NN plugin: dense stays on svc's exact copy (recall ${overlap(answers.top.dense.search, answers.top.dense.memory).toFixed(3)})`,
    keyword: `top 10 shared with memory's BM25: ${overlap(answers.top.keyword.search, answers.top.keyword.memory).toFixed(3)}`,
    hybrid: `top 10 shared with memory's: ${overlap(answers.top.hybrid.search, answers.top.hybrid.memory).toFixed(3)}`,
  };
  return [
    `\nsearch backend against memory, ${dist} ${n} chunks: ${ingestion.documents} text documents of ${opts.chunksPerDocument} chunks of ${WORDS} words; top ${K}, ${opts.queries} questions a mode, embedding excluded (ms)`,
    `data             | mode    | memory p50 |      p99 | search p50 |      p99 | search/memory p50 | note`,
    ...MODES.map((mode) => {
      const [m, s] = [answers.ms[mode].memory, answers.ms[mode].search];
      return `${label} | ${mode.padEnd(7)} |   ${ms(pct(m, 50))} | ${ms(pct(m, 99))} |   ${ms(pct(s, 50))} | ${ms(pct(s, 99))} | ${(pct(s, 50) / pct(m, 50)).toFixed(2).padStart(16)}x | ${notes[mode]}`;
    }),
    `${label} | ingestion (upload, in turns): memory ${rate('memory').toFixed(0)} chunks/s, search ${rate('search').toFixed(0)} chunks/s, search/memory ${(rate('search') / rate('memory')).toFixed(2)}`,
    `${label} | OpenSearch index: ${index.docs} chunks, ${index.mb} MB, ${index.segments} segments, k-NN ${index.knn ? 'Lucene HNSW (m 16, ef_construction 128)' : 'not loaded'}`,
  ];
}

/**
 * The same dense questions asked of the index directly with the k-NN query's `method_parameters.ef_search` (svc asks
 * with k 10 and no ef_search, so Lucene searches each segment's graph with 10 candidates): the recall and the
 * request's own time (no svc around it) a larger ef_search would give.
 */
async function efProbes(h: RetrievalHarness, index: string, label: string, dist: Distribution, answers: Answers, opts: SearchBenchOptions) {
  const client = h.deps.search!.client;
  const lines: string[] = [];
  for (const ef of opts.efSearch) {
    const ms: number[] = [];
    const top: string[][] = [];
    for (let i = 0; i < opts.queries; i++) {
      const vector = queryVector(dist, i);
      const body = { size: K, _source: false, query: { knn: { embedding: { vector, k: K, method_parameters: { ef_search: ef } } } } };
      const [t, r] = await time(() => client.search({ index, body }));
      ms.push(t);
      top.push(r.body.hits.hits.map((hit) => String(answers.positions.get(String(hit._id)))));
    }
    lines.push(
      `${label.padEnd(16)} | OpenSearch k-NN asked directly, ef_search ${ef}: recall@10 ${overlap(top, answers.top.dense.memory).toFixed(3)}, request p50 ${pct(ms, 50).toFixed(2)} ms, p99 ${pct(ms, 99).toFixed(2)} ms`,
    );
  }
  return lines;
}
