import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import type { ObjectStore } from '../../src/platform/objects/index.ts';
import { sweepOriginals } from '../../src/retrieval/originals.ts';
import { coastPdf, ledgerNote } from './answer-fixtures.ts';
import { retrievalHarness, who, type Identity, type RetrievalHarness } from './retrieval.ts';

// The uploaded file kept in the object store: read back byte for byte with its content type by whoever may query the
// collection, counted in the collection's size, gone with its collection, and let go after the retention period.
export function retrievalOriginalsContract(label: string, openStore: () => Promise<{ store: ObjectStore; cleanup: () => Promise<void> }>) {
  describe(`original files (${label})`, () => {
    let db: Database;
    let h: RetrievalHarness;
    let store: ObjectStore;
    let dropStore: () => Promise<void>;
    const pdf = coastPdf();
    let pdfId: string;
    let noteId: string;

    const original = (slug: string, id: string, as?: Identity) =>
      h.app.request(`/collections/${slug}/documents/${id}/original`, {
        headers: as ? { 'X-User-Id': as.user, 'X-User-Role': as.roles } : {},
      });
    const sizeOf = async (slug: string) => (await h.json('GET', `/collections/${slug}`, who.engineer)).body.size_bytes as number;

    beforeAll(async () => {
      db = await openPglite({});
      ({ store, cleanup: dropStore } = await openStore());
      h = await retrievalHarness(db, { env: { SVC_ORIGINALS_RETENTION_DAYS: '30' }, originals: store });
      await h.json('POST', '/collections', who.engineer, { slug: 'coast', name: 'Coast', allowed_roles: ['svc-engineer'] });
      pdfId = (await h.upload('coast', who.engineer, { name: 'coast.pdf', bytes: pdf, type: 'application/pdf' })).body.document_id;
      noteId = (await h.upload('coast', who.engineer, { name: 'keepers.md', bytes: ledgerNote(), type: 'text/markdown' })).body.document_id;
    });
    afterAll(async () => {
      await h?.close();
      await db?.close();
      await dropStore?.();
    });

    it('answers the bytes that were uploaded, with the stored content type, as an attachment no page runs', async () => {
      const res = await original('coast', pdfId, who.engineer);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''coast.pdf");
      expect(res.headers.get('content-security-policy')).toContain('sandbox');
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(pdf);
      const note = await original('coast', noteId, who.engineer);
      expect(note.headers.get('content-type')).toBe('text/markdown');
      expect(new Uint8Array(await note.arrayBuffer())).toEqual(ledgerNote());
    });

    it.each([
      ['a role the collection does not admit', who.analyst, 403],
      ['no caller', undefined, 401],
    ])('refuses %s (%i)', async (_, as, status) => {
      const res = await original('coast', pdfId, as);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    });

    it('is 404 for a document not in the collection, and 400 for a malformed id', async () => {
      expect((await original('coast', '00000000-0000-4000-8000-000000000000', who.engineer)).status).toBe(404);
      expect((await original('nowhere', pdfId, who.engineer)).status).toBe(404);
      expect((await original('coast', 'not-a-uuid', who.engineer)).status).toBe(400);
    });

    it("counts the originals in the collection's size, with the extracted text", async () => {
      const docs = (await h.json('GET', '/collections/coast/documents', who.engineer)).body.documents;
      const uploaded = docs.reduce((n: number, d: any) => n + d.size_bytes, 0);
      const size = await sizeOf('coast');
      // the originals are all of the uploaded bytes; the text is what is left, and there is some
      expect(uploaded).toBe(pdf.length + ledgerNote().length);
      expect(size).toBeGreaterThan(uploaded);
      expect(size - uploaded).toBeLessThan(2000);
    });

    it('lets an original go after SVC_ORIGINALS_RETENTION_DAYS: the route says so and the size drops', async () => {
      const before = await sizeOf('coast');
      await db.query(`UPDATE retrieval_documents SET created_at = now() - interval '31 days' WHERE id = $1::uuid`, [pdfId]);
      const res = await original('coast', pdfId, who.engineer);
      expect(res.status).toBe(404);
      expect((await res.json()).detail).toContain('SVC_ORIGINALS_RETENTION_DAYS keeps originals 30 days');
      expect(await sweepOriginals(h.deps)).toBe(1);
      expect(await store.get(`coast/${pdfId}`)).toBeNull();
      expect(await sizeOf('coast')).toBe(before - pdf.length);
      // the document itself stays, and its pages still read as text
      expect((await h.json('GET', `/collections/coast/documents/${pdfId}/pages/3`, who.engineer)).status).toBe(200);
      expect((await original('coast', noteId, who.engineer)).status).toBe(200);
    });

    it('removes the originals with their collection', async () => {
      await h.json('POST', '/collections', who.engineer, { slug: 'gone', name: 'Gone', allowed_roles: [] });
      const id = (await h.upload('gone', who.engineer, { name: 'coast.pdf', bytes: pdf, type: 'application/pdf' })).body.document_id;
      expect(await store.get(`gone/${id}`)).not.toBeNull();
      expect((await h.json('DELETE', '/collections/gone', who.engineer)).status).toBe(200);
      expect(await store.get(`gone/${id}`)).toBeNull();
      expect((await original('gone', id, who.engineer)).status).toBe(404);
    });

    it('keeps nothing of an upload that fails', async () => {
      const before = (await store.listTree('')).map((o) => o.key);
      const res = await h.upload('coast', who.engineer, { name: 'empty.txt', bytes: new Uint8Array(), type: 'text/plain' });
      expect(res.status).toBe(422);
      const broken = await h.upload('coast', who.engineer, { name: 'broken.pdf', bytes: pdf.slice(0, 200), type: 'application/pdf' });
      expect(broken.status).toBeGreaterThanOrEqual(400);
      expect((await store.listTree('')).map((o) => o.key)).toEqual(before);
    });

    it('sweeps objects whose document is gone', async () => {
      await store.put(`coast/11111111-1111-4111-8111-111111111111`, new TextEncoder().encode('left behind'));
      expect(await sweepOriginals(h.deps)).toBe(1);
      expect((await store.listTree('coast')).map((o) => o.key)).toEqual([`coast/${noteId}`]);
    });
  });
}
