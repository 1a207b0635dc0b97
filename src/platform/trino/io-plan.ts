// What Trino says a statement will read: `EXPLAIN (TYPE IO, FORMAT JSON)`, its input tables and their estimates.
// Explore's cost gate and lineage check read it; retrieval's imports read which tables a source reads.

export type IoPlan = {
  inputTableColumnInfos?: {
    table?: { catalog?: string; schemaTable?: { schema?: string; table?: string } };
    estimate?: { outputSizeInBytes?: number | string };
  }[];
};

export const explainIo = (sql: string) => `EXPLAIN (TYPE IO, FORMAT JSON) ${sql}`;

/** The tables an IO plan reads, `catalog.schema.table` in lower case; a table the plan cannot name is `?`. */
export function relationsRead(explainJson: string): string[] {
  const plan = JSON.parse(explainJson) as IoPlan;
  return (plan.inputTableColumnInfos ?? []).map(({ table }) =>
    table?.catalog && table.schemaTable?.schema && table.schemaTable.table
      ? `${table.catalog}.${table.schemaTable.schema}.${table.schemaTable.table}`.toLowerCase()
      : '?',
  );
}
