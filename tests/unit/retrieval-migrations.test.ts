import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, migratePlatform, openPglite, type Database } from '../../src/platform/db/index.ts';

// 003_unique_content on a database that already holds copies of one file: the oldest copy stays, the others go
// with their chunks, and the collection moves to a new version so in-memory indexes drop the removed chunks.
describe('retrieval migration 003: one document per content', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite({});
  });
  afterAll(() => db.close());

  it('keeps the oldest copy of each content per collection and then refuses copies', async () => {
    await migratePlatform(db);
    const all = await loadMigrations(new URL('../../src/retrieval/migrations/', import.meta.url));
    expect(all.map((m) => m.id)).toContain('003_unique_content');
    await migrate(
      db,
      'retrieval',
      all.filter((m) => m.id < '003'),
    );

    await db.exec(`INSERT INTO retrieval_collections (slug, name, created_by) VALUES ('a', 'A', 't'), ('b', 'B', 't')`);
    const doc = (id: string, slug: string, sha: string, at: string) =>
      db.query(
        `INSERT INTO retrieval_documents (id, collection_slug, filename, content_type, format, size_bytes, sha256, page_count, status, chunk_count, uploaded_by, created_at)
         VALUES ($1::uuid, $2, $1::text, 'text/plain', 'text', 1, $3, 1, 'INDEXED', 1, 't', $4)`,
        [id, slug, sha, at],
      );
    const ids = {
      first: '00000000-0000-0000-0000-000000000001',
      copy: '00000000-0000-0000-0000-000000000002',
      other: '00000000-0000-0000-0000-000000000003',
      inB: '00000000-0000-0000-0000-000000000004',
    };
    await doc(ids.copy, 'a', 'same', '2026-02-01T00:00:00Z');
    await doc(ids.first, 'a', 'same', '2026-01-01T00:00:00Z');
    await doc(ids.other, 'a', 'different', '2026-03-01T00:00:00Z');
    await doc(ids.inB, 'b', 'same', '2026-04-01T00:00:00Z');
    for (const [i, id] of Object.values(ids).entries()) {
      await db.query(
        `INSERT INTO retrieval_chunks (id, document_id, collection_slug, ordinal, page, text, embedding)
         SELECT $1, id, collection_slug, 0, 1, 'x', '[1,0,0]' FROM retrieval_documents WHERE id = $2`,
        [`10000000-0000-0000-0000-00000000000${i}`, id],
      );
    }
    const versions = async () =>
      Object.fromEntries(
        (await db.query<{ slug: string; version: number }>(`SELECT slug, version FROM retrieval_collections`)).map((r) => [
          r.slug,
          r.version,
        ]),
      );
    const before = await versions();

    expect(
      await migrate(
        db,
        'retrieval',
        all.filter((m) => m.id < '004'),
      ),
    ).toEqual(['003_unique_content']);
    const left = await db.query<{ id: string }>(`SELECT id::text AS id FROM retrieval_documents ORDER BY id`);
    expect(left.map((r) => r.id)).toEqual([ids.first, ids.other, ids.inB]);
    const chunks = await db.query<{ document_id: string }>(
      `SELECT document_id::text AS document_id FROM retrieval_chunks ORDER BY document_id`,
    );
    expect(chunks.map((r) => r.document_id)).toEqual([ids.first, ids.other, ids.inB]);
    const after = await versions();
    expect(after.a).toBeGreaterThan(before.a!);
    expect(after.b).toBe(before.b);

    await expect(doc('00000000-0000-0000-0000-000000000005', 'a', 'same', '2026-05-01T00:00:00Z')).rejects.toThrow(
      /retrieval_documents_content/,
    );
  });
});
