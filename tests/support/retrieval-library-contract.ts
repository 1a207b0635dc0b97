import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenDb } from './retrieval-contract.ts';
import { retrievalHarness, who, type Identity, type RetrievalHarness } from './retrieval.ts';

// The reader's library (issue 34) through HTTP, on PGlite (unit) and real Postgres (integration): one document's
// delete, re-index and text, and the filter of query and answer in every ranking mode.

const enc = (s: string) => new TextEncoder().encode(s);
const MODES = ['dense', 'keyword', 'hybrid'] as const;

const HARBOUR = 'The harbour master logs every ferry that docks at the north pier before dawn.';
const LIGHTHOUSE = 'The lighthouse keeper logs every ferry passing the north pier at night.';
const RECIPES = '# Bread\n\nThe baker logs every ferry delivery of flour at the north pier.';

export function retrievalLibraryContract(label: string, openDb: OpenDb) {
  describe(`the reader's library over HTTP (${label})`, () => {
    let h: RetrievalHarness;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      const opened = await openDb();
      cleanup = opened.cleanup;
      h = await retrievalHarness(opened.db, { env: { SVC_CHUNK_SIZE_TOKENS: '8', SVC_CHUNK_OVERLAP_TOKENS: '2' } });
    });
    afterAll(async () => {
      await h?.close();
      await cleanup?.();
    });

    const create = (slug: string, allowed_roles: string[] = []) =>
      h.json('POST', '/collections', who.engineer, { slug, name: slug, allowed_roles });
    const upload = async (slug: string, as: Identity, name: string, text: string) => {
      const res = await h.upload(slug, as, { name, bytes: enc(text), type: name.endsWith('.md') ? 'text/markdown' : 'text/plain' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body as { document_id: string; chunk_count: number; filename: string };
    };
    const query = (slug: string, body: Record<string, unknown>, as: Identity = who.user) =>
      h.json('POST', `/collections/${slug}/query`, as, { question: 'who logs every ferry at the north pier', top_k: 20, ...body });
    const textOf = (slug: string, id: string, as: Identity = who.user) =>
      h.app.request(`/collections/${slug}/documents/${id}/text`, { headers: { 'X-User-Id': as.user, 'X-User-Role': as.roles } });

    describe('filters', () => {
      let harbour: { document_id: string };
      let lighthouse: { document_id: string };
      let recipes: { document_id: string };
      beforeAll(async () => {
        await create('filtered');
        harbour = await upload('filtered', who.user, 'harbour.txt', HARBOUR);
        lighthouse = await upload('filtered', who.analyst, 'lighthouse.txt', LIGHTHOUSE);
        recipes = await upload('filtered', who.user, 'recipes.md', RECIPES);
        // upload times the date filters can tell apart
        await h.db.query(`UPDATE retrieval_documents SET created_at = $2 WHERE id = $1`, [harbour.document_id, '2026-01-10T12:00:00Z']);
        await h.db.query(`UPDATE retrieval_documents SET created_at = $2 WHERE id = $1`, [lighthouse.document_id, '2026-02-10T12:00:00Z']);
        await h.db.query(`UPDATE retrieval_documents SET created_at = $2 WHERE id = $1`, [recipes.document_id, '2026-03-10T12:00:00Z']);
      });

      const documentsOf = (res: { body: { chunks: { document_id: string }[] } }) => new Set(res.body.chunks.map((c) => c.document_id));

      it.each(MODES)('without a filter, %s ranking finds every document', async (mode) => {
        const res = await query('filtered', { mode });
        expect(res.status).toBe(200);
        expect(documentsOf(res)).toEqual(new Set([harbour.document_id, lighthouse.document_id, recipes.document_id]));
      });

      it.each(MODES)('%s ranking keeps to the documents named', async (mode) => {
        const res = await query('filtered', { mode, filter: { document_ids: [lighthouse.document_id] } });
        expect(res.status).toBe(200);
        expect(res.body.chunks.length).toBeGreaterThan(0);
        expect(documentsOf(res)).toEqual(new Set([lighthouse.document_id]));
      });

      it.each(MODES)('%s ranking keeps to the formats named', async (mode) => {
        const res = await query('filtered', { mode, filter: { formats: ['markdown'] } });
        expect(documentsOf(res)).toEqual(new Set([recipes.document_id]));
      });

      it.each(MODES)('%s ranking keeps to the upload dates given (after inclusive, before exclusive)', async (mode) => {
        const res = await query('filtered', {
          mode,
          filter: { uploaded_after: '2026-02-10T12:00:00Z', uploaded_before: '2026-03-10T12:00:00+00:00' },
        });
        expect(documentsOf(res)).toEqual(new Set([lighthouse.document_id]));
        const earlier = await query('filtered', { mode, filter: { uploaded_before: '2026-02-01T00:00:00Z' } });
        expect(documentsOf(earlier)).toEqual(new Set([harbour.document_id]));
      });

      it('fills top_k from the filtered documents alone, however many better chunks the others hold', async () => {
        const res = await query('filtered', { mode: 'dense', top_k: 1, filter: { document_ids: [recipes.document_id] } });
        expect(res.body.chunks).toHaveLength(1);
        expect(res.body.chunks[0].document_id).toBe(recipes.document_id);
      });

      it('answers no chunks when every field holds for no document', async () => {
        const res = await query('filtered', { filter: { formats: ['pdf'] } });
        expect(res.status).toBe(200);
        expect(res.body.chunks).toEqual([]);
      });

      it('records the filter in the audit', async () => {
        const filter = { document_ids: [harbour.document_id], formats: ['text'] };
        await query('filtered', { mode: 'keyword', filter }, who.analyst);
        const audit = await h.json('GET', '/audit/queries?limit=1', who.analyst);
        expect(audit.body.queries[0]).toMatchObject({ collection: 'filtered', filter });
      });

      it('narrows the context of an answer, and records it', async () => {
        const res = await h.json('POST', '/collections/filtered/answer', who.analyst, {
          question: 'who logs every ferry at the north pier',
          filter: { document_ids: [harbour.document_id] },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.chunks.length).toBeGreaterThan(0);
        expect(new Set(res.body.chunks.map((c: { document_id: string }) => c.document_id))).toEqual(new Set([harbour.document_id]));
        for (const c of res.body.citations) expect(c.document_id).toBe(harbour.document_id);
        const audit = await h.json('GET', '/audit/queries?limit=1', who.analyst);
        expect(audit.body.queries[0]).toMatchObject({ filter: { document_ids: [harbour.document_id] }, answer: { outcome: 'answered' } });
      });

      describe.each([
        ['a document id that is no UUID', { document_ids: ['nope'] }, 'json.filter.document_ids.0', 'a document id is a UUID'],
        ['an empty list of documents', { document_ids: [] }, 'json.filter.document_ids', 'at least one document'],
        ['an unknown format', { formats: ['doc'] }, 'json.filter.formats.0', 'a format is one of pdf, docx'],
        ['an empty list of formats', { formats: [] }, 'json.filter.formats', 'at least one format'],
        ['a date without a time', { uploaded_after: '2026-01-01' }, 'json.filter.uploaded_after', 'ISO 8601 date and time'],
        [
          'dates in the wrong order',
          { uploaded_after: '2026-03-01T00:00:00Z', uploaded_before: '2026-02-01T00:00:00Z' },
          'json.filter.uploaded_before',
          'must be later than uploaded_after',
        ],
        ['an unknown field', { uploaded_on: '2026-01-01T00:00:00Z' }, 'json.filter', 'uploaded_on'],
        [
          'a document of no document in this collection',
          { document_ids: ['00000000-0000-4000-8000-000000000000'] },
          'json.filter.document_ids.0',
          "is not a document of collection 'filtered'",
        ],
      ])('refuses %s with 400', (_, filter, location, message) => {
        it.each(['query', 'answer'])('on %s', async (route) => {
          const res = await h.json('POST', `/collections/filtered/${route}`, who.user, { question: 'ferry', filter });
          expect(res.status).toBe(400);
          expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ location })]));
          expect(JSON.stringify(res.body)).toContain(message);
        });
      });

      it('asks the policy before it reads the filter: 403 for a caller who may not query, whatever the filter names', async () => {
        await create('filtered-closed', ['svc-analyst']);
        const filter = { document_ids: ['00000000-0000-4000-8000-000000000000'] };
        expect((await query('filtered-closed', { filter }, who.user)).status).toBe(403);
        expect((await query('filtered-closed', { filter }, who.analyst)).status).toBe(400);
      });
    });

    describe('one document', () => {
      it('deletes it with its chunks, from every ranking, the list and its text; the audit keeps its records', async () => {
        await create('deleting');
        const kept = await upload('deleting', who.user, 'kept.txt', HARBOUR);
        const gone = await upload('deleting', who.user, 'gone.txt', LIGHTHOUSE);
        for (const mode of MODES) expect((await query('deleting', { mode })).body.chunks.length).toBeGreaterThan(0);
        const before = await h.json('GET', '/audit/queries?limit=100', who.admin);

        const res = await h.json('DELETE', `/collections/deleting/documents/${gone.document_id}`, who.user);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ deleted: gone.document_id });

        const docs = await h.json('GET', '/collections/deleting/documents', who.user);
        expect(docs.body.documents.map((d: { filename: string }) => d.filename)).toEqual(['kept.txt']);
        const collection = await h.json('GET', '/collections/deleting', who.user);
        expect(collection.body).toMatchObject({ document_count: 1, chunk_count: kept.chunk_count });
        for (const mode of MODES) {
          const chunks = (await query('deleting', { mode })).body.chunks as { document_id: string }[];
          expect(chunks.length).toBeGreaterThan(0);
          expect(chunks.every((c) => c.document_id === kept.document_id)).toBe(true);
        }
        expect((await textOf('deleting', gone.document_id)).status).toBe(404);
        expect((await h.json('DELETE', `/collections/deleting/documents/${gone.document_id}`, who.user)).status).toBe(404);
        // its pages and chunks went with it
        expect(await h.db.query(`SELECT 1 FROM retrieval_document_pages WHERE document_id = $1`, [gone.document_id])).toHaveLength(0);
        expect(await h.db.query(`SELECT 1 FROM retrieval_chunks WHERE document_id = $1`, [gone.document_id])).toHaveLength(0);
        const after = await h.json('GET', '/audit/queries?limit=100', who.admin);
        expect(after.body.queries.slice(-before.body.queries.length)).toEqual(before.body.queries);
        // the same bytes can be uploaded again
        expect((await h.upload('deleting', who.user, { name: 'gone.txt', bytes: enc(LIGHTHOUSE) })).status).toBe(201);
      });

      it('re-indexes it from its stored text with the chunk settings of the replica that does it', async () => {
        await create('reindexing');
        const doc = await upload('reindexing', who.user, 'harbour.txt', HARBOUR);
        const oldChunks = await h.db.query<{ id: string }>(`SELECT id::text AS id FROM retrieval_chunks WHERE document_id = $1`, [
          doc.document_id,
        ]);
        // another replica, started after the chunk window was changed, on the same database
        const wider = await retrievalHarness(h.db, { env: { SVC_CHUNK_SIZE_TOKENS: '400', SVC_CHUNK_OVERLAP_TOKENS: '60' } });
        try {
          const res = await wider.json('POST', `/collections/reindexing/documents/${doc.document_id}/reindex`, who.user);
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          expect(res.body).toMatchObject({ document_id: doc.document_id, filename: 'harbour.txt', status: 'INDEXED', chunk_count: 1 });
          expect(doc.chunk_count).toBeGreaterThan(1);
          for (const mode of MODES) {
            const chunks = (await query('reindexing', { mode })).body.chunks as { chunk_id: string; text: string }[];
            expect(chunks).toHaveLength(1);
            expect(chunks[0]!.text).toBe(HARBOUR);
            expect(oldChunks.map((c) => c.id)).not.toContain(chunks[0]!.chunk_id);
          }
          expect((await h.json('GET', '/collections/reindexing', who.user)).body.chunk_count).toBe(1);
        } finally {
          await wider.close();
        }
      });

      it('serves its extracted text as a text/plain attachment named after the document', async () => {
        await create('reading');
        const doc = await upload('reading', who.user, 'notes on the pier.md', RECIPES);
        const res = await textOf('reading', doc.document_id, who.viewer);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/plain; charset=utf-8/i);
        expect(res.headers.get('content-disposition')).toBe(
          `attachment; filename="notes on the pier.txt"; filename*=UTF-8''notes%20on%20the%20pier.txt`,
        );
        expect(await res.text()).toBe(RECIPES);
      });

      it('answers 409 for a document stored before its text was kept', async () => {
        await create('old-docs');
        const doc = await upload('old-docs', who.user, 'old.txt', HARBOUR);
        await h.db.query(`DELETE FROM retrieval_document_pages WHERE document_id = $1`, [doc.document_id]);
        const text = await textOf('old-docs', doc.document_id);
        expect(text.status).toBe(409);
        expect((await text.json()).detail).toMatch(/upload the file again/);
        expect((await h.json('POST', `/collections/old-docs/documents/${doc.document_id}/reindex`, who.user)).status).toBe(409);
      });

      describe('refusals', () => {
        let open: { document_id: string };
        let closed: { document_id: string };
        beforeAll(async () => {
          await create('library-open');
          await create('library-closed', ['svc-analyst']);
          open = await upload('library-open', who.analyst, 'harbour.txt', HARBOUR);
          closed = await upload('library-closed', who.analyst, 'lighthouse.txt', LIGHTHOUSE);
        });
        const actions = [
          ['DELETE', ''],
          ['POST', '/reindex'],
          ['GET', '/text'],
        ] as const;

        it.each(actions)('%s …%s: 404 for a document of another collection, named through this one', async (method, tail) => {
          const res = await h.json(method, `/collections/library-open/documents/${closed.document_id}${tail}`, who.admin);
          expect(res.status).toBe(404);
          expect(res.body.detail).toBe(`Document '${closed.document_id}' is not in collection 'library-open'.`);
        });

        it.each(actions)('%s …%s: 404 for an unknown document and for a collection the caller may not see', async (method, tail) => {
          const unknown = await h.json(method, `/collections/library-open/documents/00000000-0000-4000-8000-000000000000${tail}`, who.user);
          expect(unknown.status).toBe(404);
          const hidden = await h.json(method, `/collections/library-closed/documents/${closed.document_id}${tail}`, who.user);
          expect(hidden.status).toBe(404);
          expect(hidden.body.detail).toBe("Collection 'library-closed' does not exist.");
        });

        it.each(actions)('%s …%s: 400 for a document id that is no UUID', async (method, tail) => {
          const res = await h.json(method, `/collections/library-open/documents/not-a-uuid${tail}`, who.user);
          expect(res.status).toBe(400);
          expect(res.body.errors[0].location).toMatch(/document_id/);
        });

        it.each(actions)('%s …%s: 401 without identity', async (method, tail) => {
          expect((await h.json(method, `/collections/library-open/documents/${open.document_id}${tail}`)).status).toBe(401);
        });

        it.each([
          ['DELETE', '', 'delete'],
          ['POST', '/reindex', 're-index'],
        ] as const)(
          '%s …%s: 403 from the policy for another uploader and for a viewer; allowed to a manager',
          async (method, tail, verb) => {
            const path = `/collections/library-open/documents/${open.document_id}${tail}`;
            const other = await h.json(method, path, who.user);
            expect(other.status).toBe(403);
            expect(other.body.detail).toContain(`may ${verb} it`);
            const viewer = await h.json(method, path, who.viewer);
            expect(viewer.status).toBe(403);
            expect(viewer.body.detail).toContain('read-only');
            if (method === 'POST') expect((await h.json(method, path, who.engineer)).status).toBe(200);
          },
        );

        it('lets a manager delete a document someone else uploaded', async () => {
          const res = await h.json('DELETE', `/collections/library-closed/documents/${closed.document_id}`, who.admin);
          expect(res.status).toBe(200);
        });
      });
    });
  });
}
