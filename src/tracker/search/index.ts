// MLflow's search grammar, shared by every feature's search.ts: one tokenizer and parser (filter.ts over
// lexer.ts), the SQL of a comparison (sql.ts) and offset paging (paging.ts).
export { MAX_FILTER_CLAUSES, parseFilter, parseOrderBy, type Comparison, type Identifier, type OrderClause, type Value } from './filter.ts';
export { MAX_RESULTS } from './paging.ts';
