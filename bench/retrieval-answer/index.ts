// Time svc adds before an answer's first token, on real Postgres with pgvector (scripts/start-postgres.sh), in one
// run against the gateway's own time to first token:
//   svc      POST /collections/{slug}/answer with "stream": true over HTTP, until the first `delta` event: policy,
//            usage-limit charge, question embedding (the offline embedder), hybrid ranking over N chunks, the
//            prompt, the streamed call to the scripted gateway and its first token through the marker filter;
//   gateway  the same chat request (the prompt svc sent, replayed) with the `openai` SDK straight to the scripted
//            OpenAI-compatible server, until its first content delta.
// "svc adds" is, per question, svc's time minus the gateway's; the target is p50 < 20 ms at 10 000 chunks.
// Then what tracing costs an answer (issue 37: at most 0.1 ms more at p50): the same questions again in blocks of 20
// with tracing off and on in turns (../tracing-switch.ts), svc's time to the first delta in each: on's p50 minus
// off's over the run, and the median over the pairs of blocks, each with its interval.
// Run: npx tsx bench/retrieval-answer/index.ts [--chunks 10000] [--questions 200]
import OpenAI from 'openai';
import { openPostgres, type Database } from '../../src/platform/db/index.ts';
import { startServer } from '../../src/platform/http.ts';
import { freshDatabase } from '../../tests/support/pg.ts';
import { retrievalHarness, who } from '../../tests/support/retrieval.ts';
import { startScriptedGateway } from '../../tests/support/scripted-gateway.ts';
import { type PairOfBlocks, pairedCost, pooledCost, tracingSwitch } from '../tracing-switch.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const CHUNKS = Number(arg('chunks', '10000'));
const QUESTIONS = Number(arg('questions', '200'));
const DIM = 768;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const fmt = (ms: number) => ms.toFixed(2).padStart(9);

// Chunk text: 60 words from 5000 made-up words with a Zipf-like skew, so questions of three words meet long and
// short posting lists alike (as in bench/retrieval).
const VOCABULARY = Array.from({ length: 5000 }, (_, i) => {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'pe', 'da', 'gu', 'ho', 'ze', 'fi', 'bo', 'ly'];
  let w = '';
  for (let x = i + 16; x > 0; x = Math.floor(x / 16)) w += syllables[x % 16];
  return w;
});
const question = (i: number) =>
  [1, 2, 3].map((j) => VOCABULARY[Math.floor(VOCABULARY.length * (((i * 7 + j * 13) % 97) / 97) ** 3)]).join(' ');

async function populate(db: Database, slug: string, n: number) {
  await db.query(`INSERT INTO retrieval_collections (slug, name, created_by) VALUES ($1, $1, 'bench')`, [slug]);
  await db.query(
    `INSERT INTO retrieval_documents (id, collection_slug, filename, content_type, format, size_bytes, sha256, page_count, status, chunk_count, uploaded_by)
     VALUES (gen_random_uuid(), $1, 'bench.txt', 'text/plain', 'text', 0, '', 1, 'INDEXED', $2, 'bench')`,
    [slug, n],
  );
  for (let from = 0; from < n; from += 10_000) {
    await db.query(
      `INSERT INTO retrieval_chunks (id, document_id, collection_slug, ordinal, page, text, embedding)
       SELECT gen_random_uuid(), d.id, $1, g, 1,
              (SELECT string_agg($4::jsonb ->> floor(5000 * random() ^ 3)::int, ' ') FROM generate_series(1, 60) WHERE g IS NOT NULL) || '.',
              l2_normalize((SELECT array_agg(random() - 0.5) FROM generate_series(1, ${DIM}) WHERE g IS NOT NULL)::vector)
       FROM retrieval_documents d, generate_series($2::int, $3::int) g WHERE d.collection_slug = $1`,
      [slug, from, Math.min(from + 10_000, n) - 1, JSON.stringify(VOCABULARY)],
    );
  }
  await db.query(`UPDATE retrieval_collections SET version = version + 1 WHERE slug = $1`, [slug]);
}

/** Milliseconds until the first `delta` event of an answer stream, then the stream read to its end. */
async function svcFirstToken(url: string, q: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'X-User-Id': who.engineer.user, 'X-User-Role': who.engineer.roles, 'Content-Type': 'application/json' },
    body: JSON.stringify({ question: q, stream: true }),
  });
  if (res.status !== 200) throw new Error(`answer: HTTP ${res.status} ${await res.text()}`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let seen = '';
  let first: number | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value;
    if (first === undefined && seen.includes('event: delta')) first = performance.now() - started;
  }
  if (first === undefined) throw new Error(`no delta in the answer to '${q}': ${seen.slice(0, 300)}`);
  return first;
}

async function gatewayFirstToken(client: OpenAI, body: any): Promise<number> {
  const started = performance.now();
  const stream = await client.chat.completions.create({ ...(body as OpenAI.ChatCompletionCreateParamsStreaming), stream: true });
  let first: number | undefined;
  for await (const chunk of stream) if (first === undefined && chunk.choices?.[0]?.delta?.content) first = performance.now() - started;
  return first!;
}

async function main() {
  const tracing = await tracingSwitch('retrieval');
  const fresh = await freshDatabase('bench_answer');
  const db = openPostgres(fresh.cfg);
  const gw = await startScriptedGateway({
    models: ['svc-chat'],
    chat: () => 'The passage says so [1], and another agrees [2]. Nothing else is known.',
  });
  const h = await retrievalHarness(db, { env: { SVC_CHAT_URL: gw.url, SVC_LIMIT_RETRIEVAL_ANSWERS: '100000000/h' }, conformance: false });
  const server = await startServer(h.app, 0, '127.0.0.1');
  const client = new OpenAI({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  try {
    const t0 = performance.now();
    await populate(db, 'bench', CHUNKS);
    const fill = performance.now() - t0;
    const url = `${server.url}/collections/bench/answer`;
    const cold = await svcFirstToken(url, question(0));
    for (let i = 0; i < 20; i++) await svcFirstToken(url, question(i)); // warm both paths
    const svc: number[] = [];
    const direct: number[] = [];
    const added: number[] = [];
    for (let i = 0; i < QUESTIONS; i++) {
      const s = await svcFirstToken(url, `${question(i)} q${i}`);
      const d = await gatewayFirstToken(client, gw.requests.at(-1)!.body);
      svc.push(s);
      direct.push(d);
      added.push(s - d);
    }
    console.log(`\ntime to first token of an answer, ${CHUNKS} chunks, ${QUESTIONS} questions, real Postgres (ms)`);
    console.log(` path                                    |       p50 |       p99`);
    console.log(` svc /answer stream (HTTP, first delta)  | ${fmt(pct(svc, 50))} | ${fmt(pct(svc, 99))}`);
    console.log(` scripted gateway via openai SDK         | ${fmt(pct(direct, 50))} | ${fmt(pct(direct, 99))}`);
    console.log(
      ` svc adds (per question: svc - gateway)  | ${fmt(pct(added, 50))} | ${fmt(pct(added, 99))}   target p50 < 20 ms: ${pct(added, 50) < 20 ? 'met' : 'NOT met'}`,
    );
    console.log(
      ` ratio svc / gateway p50 ${(pct(svc, 50) / pct(direct, 50)).toFixed(1)}x; first answer ${cold.toFixed(0)} ms (index builds); data load ${(fill / 1000).toFixed(1)} s`,
    );

    // pairs of blocks of 20, which of the two goes first alternating, so drift from load moves both alike
    const traced = { off: [] as number[], on: [] as number[] };
    const pairs: number[] = [];
    const blocks: PairOfBlocks[] = [];
    const block = async (mode: 'off' | 'on', from: number) => {
      tracing.set(mode === 'on');
      const these: number[] = [];
      for (let i = from; i < from + 20; i++) these.push(await svcFirstToken(url, `${question(i)} traced ${i}`));
      traced[mode].push(...these);
      return these;
    };
    for (let p = 0; p < QUESTIONS / 20; p++) {
      const [first, second] = p % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      const a = await block(first, 40 * p);
      const b = await block(second, 40 * p + 20);
      const pair = first === 'on' ? { on: a, off: b } : { on: b, off: a };
      blocks.push(pair);
      pairs.push(pct(pair.on, 50) - pct(pair.off, 50));
    }
    tracing.set(true);
    const spans = await tracing.exported();
    const dropped = await tracing.dropped();
    const cost = pairedCost(pairs);
    const pooled = pooledCost(blocks);
    console.log(`\ntracing off and on, ${QUESTIONS} questions each in blocks of 20 (svc's time to the first delta, ms)`);
    console.log(` tracing off | ${fmt(pct(traced.off, 50))} | ${fmt(pct(traced.off, 99))}`);
    console.log(` tracing on  | ${fmt(pct(traced.on, 50))} | ${fmt(pct(traced.on, 99))} | ${spans} spans exported, ${dropped} dropped`);
    console.log(
      ` on costs ${pooled.cost.toFixed(3)} ms more at p50 of the whole run (95% interval ${pooled.low.toFixed(3)} to ${pooled.high.toFixed(3)}, resampling the ${blocks.length} pairs of blocks; target <= 0.100 ms)`,
    );
    console.log(
      `          ${cost.median.toFixed(3)} ms by the median over the pairs of blocks of their p50s' difference (95% interval ${cost.low.toFixed(3)} to ${cost.high.toFixed(3)})`,
    );
  } finally {
    await server.close();
    await h.close();
    await gw.close();
    await db.close();
    await fresh.drop();
    await tracing.close();
  }
}

await main();
