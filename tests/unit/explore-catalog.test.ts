import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTags } from '../../src/platform/catalog-tags.ts';
import { piiColumns, readCatalog, searchCatalog, type CatalogEntry } from '../../src/explore/catalog.ts';
import { createEmbeddedEngine } from '../../src/explore/engines/embedded.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';

describe('explore catalog', () => {
  let engine: QueryEngine;
  let entries: CatalogEntry[];
  beforeAll(async () => {
    engine = await createEmbeddedEngine();
    entries = await readCatalog(engine, ['tpch', 'tpcds', 'postgresql', 'iceberg'], await loadCatalogTags());
  }, 60_000);
  afterAll(() => engine.close());

  it('reads every table with its columns from the engine and the descriptions from the tags file', () => {
    expect(entries.map((e) => e.fqn).sort()).toEqual(
      ['customer', 'lineitem', 'nation', 'orders', 'part', 'partsupp', 'region', 'supplier'].map((t) => `tpch.tiny.${t}`),
    );
    const customer = entries.find((e) => e.name === 'customer')!;
    expect(customer.description).toMatch(/Customers/);
    expect(customer.columns.find((c) => c.name === 'c_phone')).toEqual({ name: 'c_phone', type: 'varchar', tags: ['pii'] });
    expect(customer.columns.find((c) => c.name === 'c_acctbal')).toEqual({ name: 'c_acctbal', type: 'double', tags: [] });
  });

  it('tags the shipped personal-data columns', () => {
    expect([...piiColumns(entries)].sort()).toEqual([
      'tpch.tiny.customer.c_address',
      'tpch.tiny.customer.c_name',
      'tpch.tiny.customer.c_phone',
      'tpch.tiny.supplier.s_address',
      'tpch.tiny.supplier.s_name',
      'tpch.tiny.supplier.s_phone',
    ]);
  });

  it.each([
    ['how many customers are there per nation', ['tpch.tiny.customer', 'tpch.tiny.nation']],
    ['top 5 orders by total price', ['tpch.tiny.orders']],
    ['average discount by ship mode', ['tpch.tiny.lineitem']],
    ['suppliers in each region', ['tpch.tiny.supplier', 'tpch.tiny.region']],
  ])('finds the tables for "%s"', (q, expected) => {
    const found = searchCatalog(entries, q).map((r) => r.entry.fqn);
    for (const fqn of expected) expect(found.slice(0, expected.length + 1)).toContain(fqn);
  });

  it('finds nothing for words no table knows', () => {
    expect(searchCatalog(entries, 'weather forecast tomorrow')).toEqual([]);
  });
});
