import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { createFolderStore, ObjectStoreError, type ObjectStore } from '../../src/platform/objects/index.ts';
import { coastPdf } from '../support/answer-fixtures.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';

// An upload records its original's size with the document's row, before the file is written: when the object store
// then refuses the file, the document stays, answered 201, without an original, and nothing says otherwise.
describe('an original the object store refuses', () => {
  let db: Database;
  let h: RetrievalHarness;
  let dir: string;
  let refusing = true;
  const pdf = coastPdf();

  beforeAll(async () => {
    db = await openPglite({});
    dir = await mkdtemp(join(tmpdir(), 'svc-originals-refused-'));
    const folder = createFolderStore(dir);
    const store: ObjectStore = {
      ...folder,
      put: (key, body, opts) =>
        refusing ? Promise.reject(new ObjectStoreError('FAILED', `put ${key}: the store is full`)) : folder.put(key, body, opts),
    };
    h = await retrievalHarness(db, { originals: store });
    await h.json('POST', '/collections', who.engineer, { slug: 'coast', name: 'Coast', allowed_roles: [] });
  });
  afterAll(async () => {
    await h?.close();
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const original = (id: string) =>
    h.app.request(`/collections/coast/documents/${id}/original`, {
      headers: { 'X-User-Id': who.engineer.user, 'X-User-Role': who.engineer.roles },
    });
  const sizeOf = async () => (await h.json('GET', '/collections/coast', who.engineer)).body.size_bytes as number;

  it('keeps the document and its text, answers that no original is kept, and leaves the file out of the size', async () => {
    const up = await h.upload('coast', who.engineer, { name: 'coast.pdf', bytes: pdf, type: 'application/pdf' });
    expect(up.status).toBe(201);
    const id = up.body.document_id as string;
    const res = await original(id);
    expect(res.status).toBe(404);
    expect((await res.json()).detail).toContain("The original file of 'coast.pdf' is not kept (uploaded before originals were kept");
    expect((await h.json('GET', `/collections/coast/documents/${id}/pages/1`, who.engineer)).status).toBe(200);
    // the size is the extracted text alone
    const textOnly = await sizeOf();
    expect(textOnly).toBeGreaterThan(0);
    expect(textOnly).toBeLessThan(pdf.length);

    // the same bytes once the store takes them, in another collection: the size counts the file
    refusing = false;
    await h.json('POST', '/collections', who.engineer, { slug: 'kept', name: 'Kept', allowed_roles: [] });
    const kept = await h.upload('kept', who.engineer, { name: 'coast.pdf', bytes: pdf, type: 'application/pdf' });
    expect(kept.status).toBe(201);
    expect((await h.json('GET', '/collections/kept', who.engineer)).body.size_bytes).toBe(textOnly + pdf.length);
  });
});
