import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePlatform, openPglite, type Database } from '../../src/platform/db/index.ts';
import { embeddingsOf, registerEmbeddedColumn } from '../../src/platform/embedded-columns/index.ts';

// The registry of embedded columns (docs/explore.md, "Hybrid SQL"): only a table source whose text and key are plain
// columns is recorded, in the names explore's validator uses; without retrieval's tables nothing is embedded.
describe('registry of embedded columns', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite({});
    await migratePlatform(db);
  }, 60_000);
  afterAll(() => db.close());

  const imported = (over: Record<string, string>) => ({
    importId: crypto.randomUUID(),
    documentId: crypto.randomUUID(),
    collection: 'orders',
    source: 'tpch.tiny.orders',
    text: 'o_comment',
    key: 'o_orderkey',
    lakeTable: '"iceberg"."lake"."c_1"',
    model: 'offline-hashing',
    dim: 64,
    ...over,
  });

  it.each([
    ['a SELECT source', { source: 'SELECT * FROM tpch.tiny.orders' }],
    ['a text expression', { text: "o_comment || ' '" }],
    ['a key expression', { key: 'CAST(o_orderkey AS varchar)' }],
    ['a two-part table name', { source: 'tiny.orders' }],
  ])('does not record %s', async (_, over) => {
    expect(await registerEmbeddedColumn(db, imported(over))).toBe(false);
  });

  it('records a table column in lower case, its lake table unquoted', async () => {
    expect(await registerEmbeddedColumn(db, imported({ source: 'TPCH.tiny.Orders', text: '"O_COMMENT"' }))).toBe(true);
    const rows = await db.query(`SELECT source_table, text_column, key_column, lake_table FROM embedded_columns`);
    expect(rows).toEqual([
      { source_table: 'tpch.tiny.orders', text_column: 'o_comment', key_column: 'o_orderkey', lake_table: 'iceberg.lake.c_1' },
    ]);
  });

  it("finds nothing on a database where retrieval's tables are missing", async () => {
    expect(await embeddingsOf(db, 'tpch.tiny.orders', 'o_comment')).toEqual([]);
  });
});
