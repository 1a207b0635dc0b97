// Keyword ranking: BM25 over English and French terms with identifiers kept whole, one in-memory index per
// collection kept current from the database.
export { analyse, type Analysed } from './analyse.ts';
export { B, createKeywordIndex, K1, type KeywordHit, type KeywordIndex } from './bm25.ts';
export { createKeywordIndexes, type KeywordIndexes } from './copies.ts';
export type { TextRows, TextSource } from './rows.ts';
