import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { splitCount } from '../../src/retrieval/imports/index.ts';
import { importFile } from '../../src/retrieval/imports/parquet.ts';
import { chunkIdOf } from '../../src/retrieval/imports/run.ts';
import { partRows, sourceRelation } from '../../src/retrieval/imports/statements.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// Imports where no Trino is needed: the requests refused before Trino is asked, the parts an import is cut into, a
// row's chunk id, and the Parquet file Trino registers, read back (tests/integration/retrieval-lake-import.test.ts and
// retrieval-lake-embed-cli.test.ts run imports on the real servers).

describe('imports, refused before Trino is asked', () => {
  let h: RetrievalHarness;
  beforeAll(async () => {
    h = await retrievalHarness(await openPglite({}));
    expect((await h.json('POST', '/collections', who.engineer, { slug: 'notes', name: 'Notes', allowed_roles: [] })).status).toBe(201);
  }, 240_000);
  afterAll(() => h?.close());
  const orders = { source: 'tpch.tiny.orders', text: 'o_comment', key: 'o_orderkey' };

  it('answers 409 for a collection that is not on the lake, naming its backend, and writes nothing', async () => {
    const res = await h.json('POST', '/collections/notes/imports', who.engineer, orders);
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe("Imports write to a lake collection's table; 'notes' is on the memory backend.");
    expect((await h.json('GET', '/collections/notes/imports', who.engineer)).body).toEqual({ imports: [] });
    expect((await h.json('GET', '/collections/notes/documents', who.engineer)).body.documents).toEqual([]);
  });

  it.each([
    [{ ...orders, text: '' }, /text/],
    [{ ...orders, key: undefined }, /key/],
    [{ ...orders, workers: 17 }, /workers/],
    [{ ...orders, unknown: 1 }, /unknown/i],
    [{ ...orders, metadata: 'o_orderdate' }, /metadata/],
  ])('answers 400 for the malformed body %j', async (body, said) => {
    const res = await h.json('POST', '/collections/notes/imports', who.engineer, body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(said);
  });

  it('answers 404 for an unknown collection or import, and for a collection the caller may not see', async () => {
    expect((await h.json('POST', '/collections/nope/imports', who.engineer, orders)).status).toBe(404);
    const unknown = await h.json('GET', '/collections/notes/imports/6f1c1e1a-0000-4000-8000-000000000000', who.engineer);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/has no import/);
    expect((await h.json('GET', '/collections/notes/imports/not-a-uuid', who.engineer)).status).toBe(400);
    expect(
      (await h.json('POST', '/collections', who.engineer, { slug: 'engineers', name: 'E', allowed_roles: ['svc-engineer'] })).status,
    ).toBe(201);
    expect((await h.json('POST', '/collections/engineers/imports', who.viewer, orders)).status).toBe(404);
  });
});

describe('an import, in parts', () => {
  it('cuts a source into a power of two parts of at most the part size, 16 to 1024', () => {
    expect(splitCount(0, 50_000)).toBe(16);
    expect(splitCount(800_000, 50_000)).toBe(16);
    expect(splitCount(800_001, 50_000)).toBe(32);
    expect(splitCount(1_500_000, 50_000)).toBe(32);
    expect(splitCount(10 ** 12, 50_000)).toBe(1024);
  });

  it('reads a part by a hash of the key, the same part for a key whatever the run', () => {
    const sql = partRows({ source: 'tpch.sf1.orders', text: 'o_comment', key: 'o_orderkey', metadata: [] }, [], 3, 32);
    expect(sql).toMatch(/bitwise_and\(from_big_endian_64\(xxhash64\(to_utf8\(import_key\)\)\), 31\) = 3/);
    expect(sourceRelation('tpch.sf1.orders')).toBe('"tpch"."sf1"."orders"');
    expect(sourceRelation('SELECT 1 AS k')).toBe('(SELECT 1 AS k) AS import_source');
  });

  it('names a row by its import and key: the same key the same chunk, another import another', () => {
    const id = chunkIdOf('orders', '42');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(chunkIdOf('orders', '42')).toBe(id);
    expect(chunkIdOf('orders', '43')).not.toBe(id);
    expect(chunkIdOf('other', '42')).not.toBe(id);
  });

  it('writes the rows as Parquet in the columns of a collection table, vectors exact', async () => {
    const embedding = Float32Array.from([0.1, -0.25, 1e-7, 3.4028234663852886e38]);
    const bytes = importFile(
      [
        {
          chunkId: chunkIdOf('c', 'k1'),
          key: 'k1',
          bucket: 7,
          text: 'late shipment',
          seq: 2 ** 40,
          embedding,
          metadata: [1995n, '1995-03-04', 'HIGH'],
        },
      ],
      { id: 'd0c5e4a0-0000-4000-8000-000000000001', filename: 'tpch.tiny.orders' },
      [
        { name: 'o_custkey', type: 'bigint' },
        { name: 'o_orderdate', type: 'date' },
        { name: 'o_orderpriority', type: 'varchar' },
      ],
      1_700_000_000_000_000n,
    );
    const [row] = (await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    })) as Record<string, unknown>[];
    expect(row).toMatchObject({
      chunk_id: chunkIdOf('c', 'k1'),
      document_id: 'd0c5e4a0-0000-4000-8000-000000000001',
      file_name: 'tpch.tiny.orders',
      page: 1,
      chunk_index: 0,
      text: 'late shipment',
      seq: 2n ** 40n,
      import_key: 'k1',
      import_bucket: 7,
      o_custkey: 1995n,
      o_orderpriority: 'HIGH',
    });
    expect(Float32Array.from(row!.embedding as number[])).toEqual(embedding);
    expect(new Date(row!.o_orderdate as Date).toISOString().slice(0, 10)).toBe('1995-03-04');
  });
});
