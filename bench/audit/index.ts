// What the audit chain adds to an audited request on the real Postgres (scripts/start-postgres.sh), in one run: the
// retrieval audit record written as before the chain (one INSERT into a plain table: the peer) against the same
// record appended to the chain (lock the head, hash, insert, move the head: one statement). Alternated per request
// so both see the same machine; once with one writer and once with 8 at a time (the head row is what they queue on).
// The target: the chain adds less than 0.2 ms at p50.
// Run: npx tsx bench/audit/index.ts [--requests 5000] [--writers 8]
import { appendAudit } from '../../src/platform/audit/index.ts';
import { migratePlatform, openPostgres, type Database } from '../../src/platform/db/index.ts';
import { freshDatabase } from '../../tests/support/pg.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('requests', '5000'));
const WRITERS = Number(arg('writers', '8'));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(3).padStart(8)} ms`;

// A retrieval's record as retrieval writes it: the question, the 5 chunks returned and their scores.
const record = (i: number) => ({
  user_id: `user${i % 50}`,
  roles: ['svc-analyst'],
  collection: 'handbook',
  question: `how many vacation days do I get in year ${i}?`,
  top_k: 5,
  chunk_ids: Array.from({ length: 5 }, (_, k) => `0a6f7c1e-${String(i).padStart(4, '0')}-4c2b-9d3e-00000000000${k}`),
  scores: [0.91, 0.87, 0.84, 0.8, 0.77].map((s) => s - (i % 7) / 1000),
  latency_ms: 3.2,
});

async function plainInsert(db: Database, i: number) {
  const a = record(i);
  await db.query(
    `INSERT INTO bench_plain_audit (user_id, roles, collection, question, top_k, chunk_ids, scores, latency_ms)
     VALUES ($1, ARRAY(SELECT jsonb_array_elements_text($2::jsonb)), $3, $4, $5,
             ARRAY(SELECT jsonb_array_elements_text($6::jsonb)),
             ARRAY(SELECT (jsonb_array_elements_text($7::jsonb))::float8), $8)`,
    [
      a.user_id,
      JSON.stringify(a.roles),
      a.collection,
      a.question,
      a.top_k,
      JSON.stringify(a.chunk_ids),
      JSON.stringify(a.scores),
      a.latency_ms,
    ],
  );
}

async function chained(db: Database, i: number) {
  const { user_id, ...detail } = record(i);
  await appendAudit(db, { service: 'retrieval', action: 'query', actor: user_id, detail });
}

/** Each writer alternates peer and chain, so drift on a shared machine falls on both alike. */
async function measure(db: Database, writers: number): Promise<{ plain: number[]; chain: number[] }> {
  const plain: number[] = [];
  const chain: number[] = [];
  const each = Math.ceil(N / writers);
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let j = 0; j < each; j++) {
        const i = w * each + j;
        const pair: [typeof chained, number[]][] = [
          [plainInsert, plain],
          [chained, chain],
        ];
        for (const [fn, into] of j % 2 ? pair.reverse() : pair) {
          const started = performance.now();
          await fn(db, i);
          into.push(performance.now() - started);
        }
      }
    }),
  );
  return { plain, chain };
}

async function main() {
  const fresh = await freshDatabase('bench_audit');
  const db = openPostgres({ ...fresh.cfg, max: Math.max(10, WRITERS) });
  try {
    await migratePlatform(db);
    await db.exec(`CREATE TABLE bench_plain_audit (
      id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), user_id text NOT NULL, roles text[] NOT NULL,
      collection text NOT NULL, question text NOT NULL, top_k integer NOT NULL, chunk_ids text[] NOT NULL,
      scores double precision[] NOT NULL, latency_ms double precision NOT NULL);
      CREATE INDEX bench_plain_audit_user ON bench_plain_audit (user_id, id DESC);`);
    await measure(db, 1); // warm both paths and the pool
    console.log(`audit record per request on Postgres, ${N} requests per case (peer: the plain INSERT retrieval used before the chain)\n`);
    console.log(
      `${'writers'.padEnd(8)} ${'plain p50'.padStart(11)} ${'chain p50'.padStart(11)} ${'added p50'.padStart(11)} ${'plain p99'.padStart(11)} ${'chain p99'.padStart(11)} ${'ratio'.padStart(6)}`,
    );
    let worst = 0;
    for (const writers of [1, WRITERS]) {
      const { plain, chain } = await measure(db, writers);
      const added = pct(chain, 50) - pct(plain, 50);
      if (writers === 1) worst = added;
      console.log(
        `${String(writers).padEnd(8)} ${ms(pct(plain, 50))} ${ms(pct(chain, 50))} ${ms(added)} ${ms(pct(plain, 99))} ${ms(pct(chain, 99))} ${`${(pct(chain, 50) / pct(plain, 50)).toFixed(2)}x`.padStart(6)}`,
      );
    }
    const [{ n }] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_records`)) as [{ n: number }];
    console.log(
      `\nchain: ${n} records written; target: under 0.2 ms added at p50 for an audited request: ${worst < 0.2 ? 'met' : 'NOT met'} (${worst.toFixed(3)} ms)`,
    );
  } finally {
    await db.close();
    await fresh.drop();
  }
}

await main();
