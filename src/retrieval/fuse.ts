// Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): a chunk's fused score is Σ 1/(60 + rank) over the
// lists that hold it. Ranks are shared by equal scores (1, 2, 2, 4), so the order in which a list happened to
// keep tied chunks does not move the fused order: a dense list whose scores carry no signal adds nothing.

export const RRF_K = 60;
const ABSENT = Number.MAX_SAFE_INTEGER;

export type Scored = { id: string; score: number };
export type Fused = { id: string; score: number; dense_rank: number | null; keyword_rank: number | null };

/** Competition ranks of a list sorted best first: equal scores share the better rank. */
export function ranks(list: readonly Scored[]): number[] {
  const out: number[] = [];
  list.forEach((hit, i) => {
    out.push(i > 0 && hit.score === list[i - 1]!.score ? out[i - 1]! : i + 1);
  });
  return out;
}

/** A single list as it ranks; `which` names the rank it fills. */
export function single(list: readonly Scored[], which: 'dense' | 'keyword'): Fused[] {
  const r = ranks(list);
  return list.map((hit, i) => ({
    id: hit.id,
    score: hit.score,
    dense_rank: which === 'dense' ? r[i]! : null,
    keyword_rank: which === 'keyword' ? r[i]! : null,
  }));
}

/**
 * The k best of the two candidate lists by fused score; equal fused scores go by the dense list's order, then
 * the keyword list's (a chunk missing from a list comes after those it holds).
 */
export function fuse(dense: readonly Scored[], keyword: readonly Scored[], k: number): Fused[] {
  const byId = new Map<string, Fused & { densePos: number; keywordPos: number }>();
  const entry = (id: string) => {
    let e = byId.get(id);
    if (!e) byId.set(id, (e = { id, score: 0, dense_rank: null, keyword_rank: null, densePos: ABSENT, keywordPos: ABSENT }));
    return e;
  };
  const denseRanks = ranks(dense);
  dense.forEach((hit, i) => {
    const e = entry(hit.id);
    e.dense_rank = denseRanks[i]!;
    e.densePos = i;
  });
  const keywordRanks = ranks(keyword);
  keyword.forEach((hit, i) => {
    const e = entry(hit.id);
    e.keyword_rank = keywordRanks[i]!;
    e.keywordPos = i;
  });
  for (const e of byId.values()) {
    // the dense term first, then the keyword term: one order of float additions everywhere
    e.score = (e.dense_rank === null ? 0 : 1 / (RRF_K + e.dense_rank)) + (e.keyword_rank === null ? 0 : 1 / (RRF_K + e.keyword_rank));
  }
  return [...byId.values()]
    .sort((a, b) => b.score - a.score || a.densePos - b.densePos || a.keywordPos - b.keywordPos)
    .slice(0, k)
    .map(({ id, score, dense_rank, keyword_rank }) => ({ id, score, dense_rank, keyword_rank }));
}
