// The explore service's SQL layer: pure functions over Trino's grammar, no I/O.
export { validateStatement, type ParsedStatement, type StatementValidation } from './statement.ts';
export { ensureLimit, hasOuterLimit } from './limit.ts';
export { tablesOf, tableReferences, relationReferences, qualify, isSystemRelation, type Defaults, type TableReference } from './tables.ts';
export { outputLineage, type ColumnLineage, type ColumnSource, type TableColumns } from './lineage/index.ts';
export { scanCounts, type ScanCounts } from './scans.ts';
export { engineStatement, type EngineStatementOptions, type TableMasks } from './engine-statement.ts';
