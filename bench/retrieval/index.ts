// Retrieval benchmark on real Postgres with pgvector (scripts/start-postgres.sh), in one run:
//   query latency (p50, p99, embedding excluded) at 10 000 and 100 000 chunks of 768 dimensions for svc's query
//   path, pgvector's exact scan and pgvector HNSW, with recall@10 against exact; svc's keyword (BM25) and hybrid
//   (dense + keyword fused by reciprocal rank) modes against its dense mode, the peer they must stay within 2x of;
//   and ingestion throughput (pages per second) of svc's upload against unpdf's bare text extraction of the same PDFs.
// Run: npx tsx bench/retrieval/index.ts [--sizes 10000,100000] [--queries 200]
import { execFileSync } from 'node:child_process';
import { extractText, getDocumentProxy } from 'unpdf';
import { openPostgres, toVector, type Database } from '../../src/platform/db/index.ts';
import type { Embedder } from '../../src/platform/gateway/index.ts';
import { queryCollection } from '../../src/retrieval/query.ts';
import { freshDatabase } from '../../tests/support/pg.ts';
import { writePdf } from '../../tests/support/pdf-writer.ts';
import { retrievalHarness, who } from '../../tests/support/retrieval.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const SIZES = arg('sizes', '10000,100000').split(',').map(Number);
const QUERIES = Number(arg('queries', '200'));
const K = 10;
const DIM = 768;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const fmt = (ms: number) => ms.toFixed(2).padStart(9);

function randomUnit(seed: number): number[] {
  let s = seed >>> 0;
  const v = Array.from({ length: DIM }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  });
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

async function time<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const r = await fn();
  return [performance.now() - t, r];
}

// Chunk text: 60 words drawn with a Zipf-like skew from 5000 made-up words, and an error code, so keyword ranking
// meets long posting lists (the common words) and rare exact tokens, as in real documents.
const VOCABULARY = Array.from({ length: 5000 }, (_, i) => {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'pe', 'da', 'gu', 'ho', 'ze', 'fi', 'bo', 'ly'];
  let w = '';
  for (let x = i + 16; x > 0; x = Math.floor(x / 16)) w += syllables[x % 16];
  return w;
});
const question = (i: number) =>
  i % 4 === 0
    ? `ERR-${(i * 37) % 10_000}`
    : [1, 2, 3].map((j) => VOCABULARY[Math.floor(VOCABULARY.length * ((((i * 7 + j * 13) % 97) / 97) ** 3))]).join(' ');

async function populate(db: Database, slug: string, n: number) {
  await db.query(`INSERT INTO retrieval_collections (slug, name, created_by) VALUES ($1, $1, 'bench')`, [slug]);
  await db.query(
    `INSERT INTO retrieval_documents (id, collection_slug, filename, content_type, format, size_bytes, sha256, page_count, status, chunk_count, uploaded_by)
     VALUES (gen_random_uuid(), $1, 'bench.txt', 'text/plain', 'text', 0, '', 1, 'INDEXED', $2, 'bench')`,
    [slug, n],
  );
  // vectors made on the server: random, L2-normalised
  for (let from = 0; from < n; from += 10_000) {
    await db.query(
      `INSERT INTO retrieval_chunks (id, document_id, collection_slug, ordinal, page, text, embedding)
       SELECT gen_random_uuid(), d.id, $1, g, 1,
              'ERR-' || (g % 10000) || ' ' ||
                (SELECT string_agg($4::jsonb ->> floor(5000 * random() ^ 3)::int, ' ') FROM generate_series(1, 60) WHERE g IS NOT NULL),
              l2_normalize((SELECT array_agg(random() - 0.5) FROM generate_series(1, ${DIM}) WHERE g IS NOT NULL)::vector)
       FROM retrieval_documents d, generate_series($2::int, $3::int) g WHERE d.collection_slug = $1`,
      [slug, from, Math.min(from + 10_000, n) - 1, JSON.stringify(VOCABULARY)],
    );
  }
  await db.query(`UPDATE retrieval_collections SET version = version + 1 WHERE slug = $1`, [slug]);
  await db.exec(`CREATE TABLE bench_${n} AS SELECT seq, embedding::vector(${DIM}) AS embedding FROM retrieval_chunks WHERE collection_slug = '${slug}'`);
  await db.exec(`ANALYZE bench_${n}`);
}

async function main() {
  execFileSync('bash', ['scripts/start-postgres.sh'], { stdio: 'inherit' });
  const fresh = await freshDatabase('bench');
  const db = openPostgres(fresh.cfg);
  const queries = Array.from({ length: QUERIES }, (_, i) => randomUnit(1000 + i));
  // each question its own text (a letters-only tag no chunk holds), so each maps to its own vector
  const tag = (i: number) => 'qx' + [...i.toString(26)].map((d) => String.fromCharCode(97 + parseInt(d, 26))).join('');
  const questions = Array.from({ length: QUERIES }, (_, i) => `${question(i)} ${tag(i)}`);
  const vectorOf = new Map(questions.map((q, i) => [q, queries[i]!]));
  const embedder: Embedder = { model: 'bench', dim: DIM, offline: true, embed: async ([q]) => [vectorOf.get(q!)!] };
  const caller = { user: 'bench', roles: ['svc-admin'], groups: [] };
  const h = await retrievalHarness(db, { embedder, env: { SVC_MAX_TOP_K: '50' } });
  const rows: string[] = [];
  try {
    for (const n of SIZES) {
      const slug = `bench-${n}`;
      const [fill] = await time(() => populate(db, slug, n));
      const [cold] = await time(() => queryCollection(h.deps, caller, slug, { question: questions[0]!, top_k: K, mode: 'dense' }));
      const [coldKeyword] = await time(() => queryCollection(h.deps, caller, slug, { question: questions[0]!, top_k: K, mode: 'keyword' }));
      const [hnswBuild] = await time(() => db.exec(`SET maintenance_work_mem = '1GB'; CREATE INDEX ON bench_${n} USING hnsw (embedding vector_cosine_ops)`));

      const exactIds: string[][] = [];
      const exact: number[] = [];
      const hnsw: number[] = [];
      const svc: number[] = [];
      const keyword: number[] = [];
      const hybrid: number[] = [];
      let hnswHits = 0;
      let svcHits = 0;
      for (let i = 0; i < QUERIES; i++) {
        const q = toVector(queries[i]!);
        const [te, re] = await time(() =>
          db.transaction(async (tx) => {
            await tx.exec('SET LOCAL enable_indexscan = off');
            // its own statement text: a prepared plan cached by the HNSW query would ignore the setting
            return tx.query<{ seq: number }>(`SELECT seq FROM bench_${n} /* exact */ ORDER BY embedding <=> $1::vector LIMIT ${K}`, [q]);
          }),
        );
        const [th, rh] = await time(() => db.query<{ seq: number }>(`SELECT seq FROM bench_${n} ORDER BY embedding <=> $1::vector LIMIT ${K}`, [q]));
        const [ts, rs] = await time(() => queryCollection(h.deps, caller, slug, { question: questions[i]!, top_k: K, mode: 'dense' }));
        const [tk] = await time(() => queryCollection(h.deps, caller, slug, { question: questions[i]!, top_k: K, mode: 'keyword' }));
        const [tf] = await time(() => queryCollection(h.deps, caller, slug, { question: questions[i]!, top_k: K, mode: 'hybrid' }));
        const want = new Set(re.map((r) => String(r.seq)));
        exactIds.push([...want]);
        exact.push(te);
        hnsw.push(th);
        svc.push(ts); // whole call: version check, rank, rows, audit write
        keyword.push(tk);
        hybrid.push(tf);
        hnswHits += rh.filter((r) => want.has(String(r.seq))).length;
        const seqs = await db.query<{ seq: number }>(
          `SELECT seq FROM retrieval_chunks WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::jsonb))::uuid[])`,
          [JSON.stringify(rs.chunks.map((c) => c.chunk_id))],
        );
        svcHits += seqs.filter((r) => want.has(String(r.seq))).length;
      }
      const recall = (hits: number) => (hits / (QUERIES * K)).toFixed(3);
      rows.push(
        `${String(n).padStart(7)} | svc dense (in-memory)    | ${fmt(pct(svc, 50))} | ${fmt(pct(svc, 99))} | ${recall(svcHits).padStart(6)} | first query ${cold.toFixed(0)} ms (index load)`,
        `${String(n).padStart(7)} | svc keyword (BM25)       | ${fmt(pct(keyword, 50))} | ${fmt(pct(keyword, 99))} | ${'-'.padStart(6)} | first query ${coldKeyword.toFixed(0)} ms (index build)`,
        `${String(n).padStart(7)} | svc hybrid (RRF)         | ${fmt(pct(hybrid, 50))} | ${fmt(pct(hybrid, 99))} | ${'-'.padStart(6)} | hybrid/dense p50 ${(pct(hybrid, 50) / pct(svc, 50)).toFixed(2)}x (target <= 2x)`,
        `${String(n).padStart(7)} | pgvector exact scan      | ${fmt(pct(exact, 50))} | ${fmt(pct(exact, 99))} | ${'1.000'.padStart(6)} |`,
        `${String(n).padStart(7)} | pgvector HNSW            | ${fmt(pct(hnsw, 50))} | ${fmt(pct(hnsw, 99))} | ${recall(hnswHits).padStart(6)} | build ${(hnswBuild / 1000).toFixed(1)} s`,
        `${String(n).padStart(7)} | ratio exact/svc p50 ${(pct(exact, 50) / pct(svc, 50)).toFixed(1)}x, hnsw/svc p50 ${(pct(hnsw, 50) / pct(svc, 50)).toFixed(2)}x (data load ${(fill / 1000).toFixed(1)} s)`,
      );
    }

    // ingestion: 20 PDFs of 10 pages
    await h.json('POST', '/collections', who.engineer, { slug: 'ingest', name: 'Ingest', allowed_roles: [] });
    const pdfs = Array.from({ length: 20 }, (_, d) =>
      writePdf(Array.from({ length: 10 }, (_, p) => ({ lines: Array.from({ length: 40 }, (_, l) => `document ${d} page ${p} line ${l} words about rivers and hills`) }))),
    );
    const ingestEmbedder = (await import('../../src/platform/gateway/index.ts')).createOfflineEmbedder(DIM);
    const hi = await retrievalHarness(db, { embedder: ingestEmbedder });
    const [tSvc] = await time(async () => {
      for (const [i, bytes] of pdfs.entries()) {
        const r = await hi.upload('ingest', who.engineer, { name: `d${i}.pdf`, type: 'application/pdf', bytes });
        if (r.status !== 201) throw new Error(JSON.stringify(r.body));
      }
    });
    const [tBare] = await time(async () => {
      for (const bytes of pdfs) await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: false });
    });
    const pages = pdfs.length * 10;
    console.log(`\nquery latency, top ${K}, ${QUERIES} queries, embedding excluded (ms)`);
    console.log(` chunks | path                     |       p50 |       p99 | recall | note`);
    console.log(rows.join('\n'));
    console.log(`\ningestion of ${pdfs.length} digital PDFs, ${pages} pages (offline embedder, real Postgres)`);
    console.log(` svc upload (extract, chunk, embed, store) | ${(pages / (tSvc / 1000)).toFixed(0).padStart(6)} pages/s`);
    console.log(` unpdf bare text extraction               | ${(pages / (tBare / 1000)).toFixed(0).padStart(6)} pages/s`);
    console.log(` ratio svc / unpdf                        | ${(tBare / tSvc).toFixed(2)}`);
    await hi.close();
  } finally {
    await h.close();
    await db.close();
    await fresh.drop();
  }
}

await main();
