// svc's side of a dataset: a collection holding the peer table's vectors as chunks (ordinal = the peer's seq), with
// row codes as ingestion writes them, and chunk text shaped like prose (about 2 400 characters of words, so the
// rows weigh what real chunks weigh). Kept in the benchmark database beside the peer's table and reused.
// Run alone to prepare (after the peer table): npx tsx bench/retrieval/collection.ts random:1000000
import type { Database } from '../../src/platform/db/index.ts';
import { copyInt8, readCopyRows } from '../../src/platform/db/index.ts';
import * as store from '../../src/retrieval/store.ts';
import { retrievalService } from '../../src/retrieval/service.ts';
import { CODE_HEADER, encodeRow, unitRow } from '../../src/retrieval/vector-index/index.ts';
import { vectorFromBinary } from '../../src/retrieval/vector-wire.ts';
import { DIM, peerTable, type Distribution } from './datasets.ts';

const BATCH = 50_000;

export async function ensureCollection(db: Database, dist: Distribution, n: number, log = console.log): Promise<string> {
  await retrievalService.migrate(db);
  const slug = `${dist}-${n}`;
  const [have] = await db.query<{ chunks: number; codes: number }>(
    `SELECT count(*)::int AS chunks, count(embedding_i8)::int AS codes FROM retrieval_chunks WHERE collection_slug = $1`,
    [slug],
  );
  if (have!.chunks === n && have!.codes === n) return slug;
  if (have!.chunks !== n) await fill(db, slug, dist, n, log);
  await backfillCodes(db, slug, log);
  return slug;
}

/** The chunks, from the peer's table, without their codes. */
async function fill(db: Database, slug: string, dist: Distribution, n: number, log: typeof console.log) {
  const started = performance.now();
  log(`${slug}: filling svc's collection from ${peerTable(dist, n)}`);
  await db.query(`DELETE FROM retrieval_collections WHERE slug = $1`, [slug]);
  await db.query(`INSERT INTO retrieval_collections (slug, name, created_by) VALUES ($1, $1, 'bench')`, [slug]);
  const [document] = await db.query<{ id: string }>(
    `INSERT INTO retrieval_documents (id, collection_slug, filename, content_type, format, size_bytes, sha256, page_count, status, chunk_count, uploaded_by)
     VALUES (gen_random_uuid(), $1, 'bench.txt', 'text/plain', 'text', 0, $1, 1, 'INDEXED', $2, 'bench') RETURNING id::text AS id`,
    [slug, n],
  );
  // a vocabulary of 2000 made-up words and, per chunk, 400 of them from a window of a long random text; a plain
  // table, not a temporary one, because the pool's next statement may run on another connection; one per collection,
  // since two benches may fill two collections at once
  const words = `bench_words_${dist}_${n}`;
  await db.exec(`DROP TABLE IF EXISTS ${words}; CREATE UNLOGGED TABLE ${words} AS SELECT string_agg(substr(md5(g::text), 1, 3 + g % 7), ' ') AS words
                 FROM (SELECT (random() * 2000)::int AS g FROM generate_series(1, 60000)) s`);
  for (let from = 1; from <= n; from += BATCH) {
    await db.query(
      `INSERT INTO retrieval_chunks (id, document_id, collection_slug, ordinal, page, text, embedding)
       SELECT gen_random_uuid(), $1::uuid, $2, p.seq, 1, substr(w.words, 1 + ((p.seq::bigint * 7919) % 300000)::int, 2400), p.embedding
       FROM ${peerTable(dist, n)} p, ${words} w WHERE p.seq BETWEEN $3 AND $4 ORDER BY p.seq`,
      [document!.id, slug, from, Math.min(n, from + BATCH - 1)],
    );
  }
  await db.exec(`DROP TABLE ${words}`);
  log(`${slug}: ${n} chunks in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** The codes ingestion would have written, for every chunk still without one: read, encode, write back in batches. */
async function backfillCodes(db: Database, slug: string, log: typeof console.log) {
  const started = performance.now();
  log(`${slug}: computing row codes`);

  const scratch = new Float64Array(DIM);
  const row32 = new Float32Array(DIM);
  let seqs: number[] = [];
  let codes: string[] = [];
  const flush = async () => {
    const [s, c] = [seqs, codes];
    seqs = [];
    codes = [];
    if (s.length === 0) return;
    await db.query(
      `UPDATE retrieval_chunks k SET embedding_i8 = decode(u.code, 'hex') FROM unnest($1::bigint[], $2::text[]) AS u(seq, code)
       WHERE k.collection_slug = $3 AND k.seq = u.seq`,
      [s, c, slug],
    );
  };
  const pending: Promise<void>[] = [];
  await readCopyRows(
    db,
    `SELECT seq, embedding FROM retrieval_chunks WHERE collection_slug = '${slug}' AND embedding_i8 IS NULL ORDER BY seq`,
    ([seq, vector]) => {
      const code = encodeRow(unitRow(vectorFromBinary(vector!), DIM, scratch, row32), DIM, new Uint8Array(CODE_HEADER + DIM));
      seqs.push(copyInt8(seq!));
      codes.push(Buffer.from(code).toString('hex'));
      if (seqs.length === 5000) pending.push(flush());
    },
  );
  await Promise.all(pending);
  await flush();
  await db.exec(`VACUUM ANALYZE retrieval_chunks`);
  await db.query(`UPDATE retrieval_collections SET version = nextval('retrieval_collection_versions') WHERE slug = $1`, [slug]);
  log(`${slug}: codes in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { openBenchDatabase } = await import('./datasets.ts');
  const db = await openBenchDatabase();
  try {
    for (const spec of process.argv.slice(2)) {
      const [dist, n] = spec.split(':') as [Distribution, string];
      const filled = await db.query(`SELECT 1 FROM peer_builds WHERE name = $1 AND rows = $2`, [peerTable(dist, Number(n)), Number(n)]);
      if (filled.length === 0) throw new Error(`${peerTable(dist, Number(n))} is not filled yet: run datasets.ts ${spec} first`);
      await ensureCollection(db, dist, Number(n));
    }
  } finally {
    await db.close();
  }
}
