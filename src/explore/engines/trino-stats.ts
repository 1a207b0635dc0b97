// The cost gate's bound on Trino: what EXPLAIN (TYPE IO) can estimate for one scan of a whole table, computed from
// the table's statistics (SHOW STATS) with Trino's own sizing rule (PlanNodeStatsEstimate.getOutputSizeInBytes):
// per column, one byte a row for the null flags, plus the fixed width for each non-null value of a fixed-width type,
// or the data size (50 bytes a value when unknown) and four bytes a row of offsets for a variable-width one. A
// scan reads some of the columns and, with a filter pushed into the connector, some of the rows, and the connector
// estimates that narrower scan with the same statistics: it can only be smaller. Nulls make it smaller too, so the
// bound takes none.
//
// That last step holds only for connectors whose scans keep the table's statistics: tpch and tpcds, which have no
// views and push nothing but filters down. Elsewhere a pushed-down aggregation or join can leave a scan with
// unknown statistics (the JDBC connectors), a view reads tables of its own, and a pushed-down dereference of a row
// column is estimated as a new column; for those the bound is undefined and EXPLAIN decides.

export const CONNECTORS_WITH_SCAN_STATISTICS: ReadonlySet<string> = new Set(['tpch', 'tpcds']);

const DEFAULT_DATA_SIZE_PER_VALUE = 50; // Trino's own default for a variable-width value without statistics
const OFFSET_BYTES = 4;
const NULL_FLAG_BYTES = 1;
// The widest fixed-width type Trino has (long decimal, uuid, ipaddress, long timestamps are 12 or 16): used for
// every fixed-width type whose exact width is less certain than it is worth being exact about.
const WIDEST_FIXED = 16;

const FIXED: Record<string, number> = { boolean: 1, tinyint: 1, smallint: 2, integer: 4, bigint: 8, real: 4, double: 8, date: 4 };
const WIDE_FIXED = /^(decimal|time|timestamp|interval|uuid$|ipaddress$)/;
const VARIABLE = /^(varchar|char|varbinary|json)(\(|$)/;

export type ColumnStatistics = { column: string; dataSize: number | null };
export type TableStatistics = { rowCount: number | null; columns: ColumnStatistics[] };

/** Bytes per row (and data size) a column can add to a scan's estimate; undefined for a type with no proof. */
function columnBound(type: string, rows: number, dataSize: number | null): number | undefined {
  const t = type.trim().toLowerCase();
  const fixed = FIXED[t] ?? (WIDE_FIXED.test(t) ? WIDEST_FIXED : undefined);
  if (fixed !== undefined) return rows * (NULL_FLAG_BYTES + fixed);
  if (VARIABLE.test(t)) return rows * (NULL_FLAG_BYTES + OFFSET_BYTES) + (dataSize ?? rows * DEFAULT_DATA_SIZE_PER_VALUE);
  return undefined; // row, array, map and any type not named here
}

/**
 * The bound for one scan of a table: its columns with their types (information_schema), its statistics (SHOW
 * STATS). Undefined without a row count, or when a column's type or statistics are missing.
 */
export function scanBoundOf(columns: { column: string; type: string }[], stats: TableStatistics): number | undefined {
  const rows = stats.rowCount;
  if (rows === null || !Number.isFinite(rows) || rows < 0 || columns.length === 0) return undefined;
  const sizes = new Map(stats.columns.map((c) => [c.column.toLowerCase(), c.dataSize]));
  let total = 0;
  for (const { column, type } of columns) {
    const name = column.toLowerCase();
    if (!sizes.has(name)) return undefined; // statistics that do not cover the table's columns prove nothing
    const dataSize = sizes.get(name)!;
    const bound = columnBound(type, rows, dataSize !== null && Number.isFinite(dataSize) ? dataSize : null);
    if (bound === undefined) return undefined;
    total += bound;
  }
  return Math.ceil(total);
}

/** SHOW STATS' rows (column_name, data_size, distinct_values_count, nulls_fraction, row_count, low, high). */
export function parseShowStats(rows: unknown[][]): TableStatistics {
  let rowCount: number | null = null;
  const columns: ColumnStatistics[] = [];
  for (const [name, dataSize, , , count] of rows) {
    if (name === null) rowCount = numberOrNull(count);
    else columns.push({ column: String(name), dataSize: numberOrNull(dataSize) });
  }
  return { rowCount, columns };
}

const numberOrNull = (v: unknown): number | null =>
  v === null || v === undefined || v === '' || !Number.isFinite(Number(v)) ? null : Number(v);
