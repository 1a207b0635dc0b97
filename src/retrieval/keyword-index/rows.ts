import type { Sql } from '../../platform/db/index.ts';

export type TextRows = { total: number; seqSum: number; rows: { seq: number; id: string; text: string }[] };
/** Where a keyword copy reads a collection's chunk texts: these two functions, as below for Postgres. */
export type TextSource = {
  textsAfter(sql: Sql, slug: string, afterSeq: number): Promise<TextRows>;
  chunkCount(sql: Sql, slug: string): Promise<number>;
};

/**
 * The collection's chunk count and the sum of its chunk sequence numbers, with the texts of the chunks after
 * `afterSeq` in sequence order, from one snapshot: the keyword copy catches up from this as the vector copy does
 * from its embeddings (indexes.ts), or is built from it with `afterSeq` 0.
 */
export async function textsAfter(sql: Sql, slug: string, afterSeq: number): Promise<TextRows> {
  const found = await sql.query<{ total: number; seq_sum: number; seq: number | null; id: string | null; text: string | null }>(
    `WITH totals AS (
       SELECT count(*)::int AS total, coalesce(sum(seq), 0)::float8 AS seq_sum FROM retrieval_chunks WHERE collection_slug = $1)
     SELECT t.total, t.seq_sum, c.seq, c.id, c.text
     FROM totals t LEFT JOIN LATERAL (
       SELECT seq, id::text AS id, text FROM retrieval_chunks WHERE collection_slug = $1 AND seq > $2 ORDER BY seq) c ON true`,
    [slug, afterSeq],
  );
  const first = found[0]!;
  return {
    total: first.total,
    seqSum: first.seq_sum,
    rows: found.filter((r) => r.seq !== null).map((r) => ({ seq: r.seq!, id: r.id!, text: r.text! })),
  };
}

export async function chunkCount(sql: Sql, slug: string): Promise<number> {
  const rows = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM retrieval_chunks WHERE collection_slug = $1`, [slug]);
  return rows[0]!.n;
}
