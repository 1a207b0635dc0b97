import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/index.ts';
import { retrievalHarness, who, type Identity, type RetrievalHarness } from './retrieval.ts';
import { chunkStoreOf, exactDenseIds, storedChunkCount } from './retrieval-stored.ts';

// The retrieval HTTP behaviour, written once and run on PGlite (unit), on real Postgres and on the search backend and
// the lake (integration).
export type OpenDb = () => Promise<{ db: Database; cleanup(): Promise<void> }>;

const text = (s: string) => new TextEncoder().encode(s);

export type RetrievalContractOptions = {
  /** Added to every harness's settings (on the lake: SVC_RAG_DEFAULT_BACKEND=lake and Trino's). */
  env?: Record<string, string>;
  /** Each user's token, sent as X-User-Token. */
  tokens?: Record<string, string>;
  /** Who asks in each role that queries (default `who`'s): on the lake, people Trino lets read it. */
  askers?: Partial<Record<'analyst' | 'user' | 'viewer', Identity>>;
  /** The user an agent asks on behalf of (X-Query-User; default agent-on-behalf): on the lake, one with a token. */
  agent?: string;
  /**
   * Whether the case of chunks stored before row codes were kept runs (default): it nulls row codes in
   * `retrieval_chunks`, which the lake, keeping its chunks in Iceberg, has not.
   */
  rowCodes?: boolean;
};

export function retrievalContract(label: string, openDb: OpenDb, opts: RetrievalContractOptions = {}) {
  const people = { ...who, ...opts.askers };
  const agent = opts.agent ?? 'agent-on-behalf';
  const harness = (db: RetrievalHarness['db'], env: Record<string, string> = {}) =>
    retrievalHarness(db, { env: { ...opts.env, ...env }, ...(opts.tokens ? { tokens: opts.tokens } : {}) });
  describe(`retrieval over HTTP (${label})`, () => {
    let h: RetrievalHarness;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      const opened = await openDb();
      cleanup = opened.cleanup;
      h = await harness(opened.db, { SVC_MAX_UPLOAD_BYTES: '200000', SVC_CHUNK_SIZE_TOKENS: '40', SVC_CHUNK_OVERLAP_TOKENS: '8' });
    });
    afterAll(async () => {
      await h?.close();
      await cleanup?.();
    });

    const create = (slug: string, allowed_roles: string[] = [], as = who.engineer) =>
      h.json('POST', '/collections', as, { slug, name: `Collection ${slug}`, description: 'test', allowed_roles });
    const counts = async (slug: string) => {
      const res = await h.json('GET', `/collections/${slug}`, who.admin);
      return { documents: res.body.document_count, chunks: res.body.chunk_count };
    };

    it('refuses a request without identity with 401 problem+json', async () => {
      const res = await h.json('GET', '/collections');
      expect(res.status).toBe(401);
      expect(res.type).toContain('application/problem+json');
      expect(res.body).toMatchObject({ status: 401, title: 'Unauthorized' });
      expect(res.body.detail).toMatch(/X-User-Id/);
    });

    it('takes the caller from X-Query-User before X-User-Id', async () => {
      await create('who-asks');
      const res = await h.app.request('/collections/who-asks/query', {
        method: 'POST',
        headers: {
          'X-Query-User': agent,
          'X-User-Id': 'gateway-bot',
          'X-User-Role': 'svc-user',
          'Content-Type': 'application/json',
          ...(opts.tokens?.[agent] ? { 'X-User-Token': opts.tokens[agent] } : {}),
        },
        body: JSON.stringify({ question: 'anything' }),
      });
      expect(res.status).toBe(200);
      const audit = await h.json('GET', '/audit/queries?limit=5', who.admin);
      expect(audit.body.queries[0].user).toBe(agent);
    });

    describe('collections', () => {
      it('creates a collection and reads it back with counts', async () => {
        const res = await create('handbook', ['svc-analyst']);
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({
          slug: 'handbook',
          name: 'Collection handbook',
          allowed_roles: ['svc-analyst'],
          document_count: 0,
          chunk_count: 0,
        });
      });

      it('answers 409 for a duplicate slug', async () => {
        await create('dupe');
        const res = await create('dupe');
        expect(res.status).toBe(409);
        expect(res.body.detail).toContain("'dupe'");
      });

      it.each(['A', 'a', '-ab', 'ab-', 'has space', 'UPPER', 'x'.repeat(64), 'dé'])(
        'rejects slug %j with 400 naming the field',
        async (slug) => {
          const res = await create(slug);
          expect(res.status).toBe(400);
          expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'json.slug' })]));
        },
      );

      it('lists every failing field of a malformed body', async () => {
        const res = await h.json('POST', '/collections', who.engineer, { slug: 'Bad Slug', allowed_roles: 'svc-user' });
        expect(res.status).toBe(400);
        const locations = res.body.errors.map((e: { location: string }) => e.location);
        expect(locations).toEqual(expect.arrayContaining(['json.slug', 'json.name', 'json.allowed_roles']));
      });

      it('lets only the policy-named roles create collections', async () => {
        for (const as of [people.analyst, people.user, people.viewer, who.stranger]) {
          expect((await create(`by-${as.user}`, [], as)).status).toBe(403);
        }
        expect((await create('by-admin', [], who.admin)).status).toBe(201);
      });

      it('shows a restricted collection only to its roles, and 404s it for others', async () => {
        await create('secret-plans', ['svc-analyst']);
        const seen = async (as: Identity) =>
          (await h.json('GET', '/collections', as)).body.collections.some((c: { slug: string }) => c.slug === 'secret-plans');
        expect(await seen(people.analyst)).toBe(true);
        expect(await seen(who.admin)).toBe(true);
        expect(await seen(people.user)).toBe(false);
        expect((await h.json('GET', '/collections/secret-plans', people.user)).status).toBe(404);
        expect((await h.json('GET', '/collections/secret-plans/documents', people.user)).status).toBe(404);
      });

      it('answers 403 on a direct query by a role outside allowed_roles, 404 for an unknown collection', async () => {
        await create('restricted-q', ['svc-analyst']);
        const denied = await h.json('POST', '/collections/restricted-q/query', people.user, { question: 'anything' });
        expect(denied.status).toBe(403);
        expect(denied.type).toContain('application/problem+json');
        expect((await h.json('POST', '/collections/restricted-q/query', people.analyst, { question: 'anything' })).status).toBe(200);
        expect((await h.json('POST', '/collections/no-such-thing/query', people.analyst, { question: 'x' })).status).toBe(404);
      });

      it('treats an empty allowed_roles as open to every known role, but not to an unknown one', async () => {
        await create('open-faq', []);
        for (const as of [people.user, people.analyst, people.viewer]) {
          expect((await h.json('POST', '/collections/open-faq/query', as, { question: 'hello' })).status).toBe(200);
        }
        expect((await h.json('POST', '/collections/open-faq/query', who.stranger, { question: 'hello' })).status).toBe(403);
      });
    });

    describe('upload and query', () => {
      it('indexes a text file, ranks the matching chunk first with its page, and records the retrieval', async () => {
        await create('notes');
        const body = [
          'Apples grow on trees in orchards across the valley.',
          'The spaceship engine uses liquid hydrogen and oxygen as propellant.',
          'Bread is baked from flour, water, yeast and salt.',
        ].join('\n\n');
        const up = await h.upload('notes', who.engineer, { name: 'notes.txt', bytes: text(body), type: 'text/plain' });
        expect(up.status).toBe(201);
        expect(up.body).toMatchObject({ filename: 'notes.txt', status: 'INDEXED', chunk_count: 1 });

        const q = await h.json('POST', '/collections/notes/query', people.user, {
          question: 'what propellant does the spaceship engine use',
          top_k: 3,
        });
        expect(q.status).toBe(200);
        expect(q.body).toMatchObject({ question: 'what propellant does the spaceship engine use', collection: 'notes' });
        expect(typeof q.body.latency_ms).toBe('number');
        expect(q.body.chunks[0]).toMatchObject({ filename: 'notes.txt', page: 1, document_id: up.body.document_id });
        expect(q.body.chunks[0].text).toContain('liquid hydrogen');

        const docs = await h.json('GET', '/collections/notes/documents', people.user);
        expect(docs.body.documents).toEqual([
          expect.objectContaining({ document_id: up.body.document_id, status: 'INDEXED', chunk_count: 1 }),
        ]);
      });

      it('in dense mode, orders chunks by descending score, exactly as pgvector (on the lake, Trino) ranks them', async () => {
        await create('ranked');
        const words = ['river', 'mountain', 'forest', 'desert', 'ocean', 'glacier', 'valley', 'island'];
        for (let d = 0; d < 4; d++) {
          const doc = Array.from(
            { length: 200 },
            (_, i) => `${words[(i * (d + 3)) % words.length]} ${words[(i + d) % words.length]} note${i % 17}`,
          ).join(' ');
          expect((await h.upload('ranked', who.engineer, { name: `doc${d}.txt`, bytes: text(doc) })).status).toBe(201);
        }
        const q = await h.json('POST', '/collections/ranked/query', people.user, {
          question: 'ocean glacier island note3',
          top_k: 10,
          mode: 'dense',
        });
        expect(q.status).toBe(200);
        const scores = q.body.chunks.map((c: { score: number }) => c.score);
        expect(scores).toEqual([...scores].sort((a, b) => b - a));
        const vector = (await h.deps.embedder.embed(['ocean glacier island note3']))[0]!;
        // pgvector over the Postgres rows, Trino over a lake table: the engine holding the chunks, asked directly
        const exact = await exactDenseIds(h, 'ranked', vector, 10);
        expect(q.body.chunks.map((c: { chunk_id: string }) => c.chunk_id)).toEqual(exact);

        // above SVC_RAG_MEMORY_INDEX_MAX_CHUNKS, pgvector ranks directly, with the same answer
        const direct = await harness(h.db, { SVC_RAG_MEMORY_INDEX_MAX_CHUNKS: '0' });
        const q2 = await direct.json('POST', '/collections/ranked/query', people.user, {
          question: 'ocean glacier island note3',
          top_k: 10,
          mode: 'dense',
        });
        expect(q2.body.chunks.map((c: { chunk_id: string }) => c.chunk_id)).toEqual(exact);
        q2.body.chunks.forEach((c: { score: number }, i: number) => {
          expect(c.score).toBeCloseTo(q.body.chunks[i].score, 5);
        });
        await direct.close();

        // a second replica on the same database builds its copy from the stored vectors, and follows an upload
        // made through the first one
        const replica = await harness(h.db);
        const q3 = await replica.json('POST', '/collections/ranked/query', people.user, {
          question: 'ocean glacier island note3',
          top_k: 10,
          mode: 'dense',
        });
        expect(q3.body.chunks.map((c: { chunk_id: string }) => c.chunk_id)).toEqual(exact);
        q3.body.chunks.forEach((c: { score: number }, i: number) => {
          expect(c.score).toBeCloseTo(q.body.chunks[i].score, 5);
        });
        expect((await h.upload('ranked', who.engineer, { name: 'late.txt', bytes: text('ocean glacier island note3') })).status).toBe(201);
        const q4 = await replica.json('POST', '/collections/ranked/query', people.user, {
          question: 'ocean glacier island note3',
          top_k: 10,
          mode: 'dense',
        });
        expect(q4.body.chunks[0].filename).toBe('late.txt');

        // a collection deleted and created again under the same slug is never answered from the old copy
        await create('reborn');
        await h.upload('reborn', who.engineer, { name: 'old.txt', bytes: text('alpha bravo charlie') });
        const ask = () =>
          replica.json('POST', '/collections/reborn/query', people.user, { question: 'alpha bravo charlie', top_k: 3, mode: 'dense' });
        expect((await ask()).body.chunks.map((c: { filename: string }) => c.filename)).toEqual(['old.txt']);
        expect((await h.json('DELETE', '/collections/reborn', who.admin)).status).toBe(200);
        await create('reborn');
        await h.upload('reborn', who.engineer, { name: 'new.txt', bytes: text('alpha bravo delta') });
        expect((await ask()).body.chunks.map((c: { filename: string }) => c.filename)).toEqual(['new.txt']);
        await replica.close();
      });

      // row codes are the Postgres rows' (memory and search backends); a lake collection's chunks have none to lose
      if (opts.rowCodes ?? true)
        it('answers the same for chunks stored before row codes were kept (their copies are built from the vectors)', async () => {
          await create('legacy');
          const words = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord'];
          for (let d = 0; d < 3; d++) {
            const doc = Array.from(
              { length: 150 },
              (_, i) => `${words[(i * (d + 2)) % words.length]} ${words[(i + d) % words.length]} mark${i % 13}`,
            ).join(' ');
            expect((await h.upload('legacy', who.engineer, { name: `doc${d}.txt`, bytes: text(doc) })).status).toBe(201);
          }
          const ask = (on: RetrievalHarness) =>
            on.json('POST', '/collections/legacy/query', people.user, { question: 'cobalt fjord mark5', top_k: 8 });
          const withCodes = (await ask(h)).body.chunks;
          expect(withCodes).toHaveLength(8);
          const [coded] = await h.db.query<{ n: number }>(
            `SELECT count(embedding_i8)::int AS n FROM retrieval_chunks WHERE collection_slug = 'legacy'`,
          );
          expect(coded!.n).toBe((await counts('legacy')).chunks);
          await h.db.exec(`UPDATE retrieval_chunks SET embedding_i8 = NULL WHERE collection_slug = 'legacy' AND seq % 2 = 0`);
          const replica = await harness(h.db);
          expect((await ask(replica)).body.chunks).toEqual(withCodes.map((c: object) => ({ ...c })));
          await replica.close();
        });

      it('uses SVC_DEFAULT_TOP_K when top_k is absent and refuses a top_k above the ceiling naming it', async () => {
        await create('many');
        const doc = Array.from({ length: 600 }, (_, i) => `word${i}`).join(' ');
        await h.upload('many', who.engineer, { name: 'many.txt', bytes: text(doc) });
        const q = await h.json('POST', '/collections/many/query', people.user, { question: 'word7' });
        expect(q.body.chunks).toHaveLength(5);
        const tooMany = await h.json('POST', '/collections/many/query', people.user, { question: 'word7', top_k: 51 });
        expect(tooMany.status).toBe(400);
        expect(tooMany.body.detail).toContain('50');
        expect(tooMany.body.detail).toContain('SVC_MAX_TOP_K');
      });

      it('refuses an upload over SVC_MAX_UPLOAD_BYTES with 413 and stores nothing', async () => {
        await create('big');
        const res = await h.upload('big', who.engineer, { name: 'big.txt', bytes: text('a '.repeat(150_000)) });
        expect(res.status).toBe(413);
        expect(res.body.detail).toContain('SVC_MAX_UPLOAD_BYTES');
        expect(await counts('big')).toEqual({ documents: 0, chunks: 0 });
      });

      it('refuses a request that is not multipart, or has no file part', async () => {
        await create('shape');
        const notMultipart = await h.json('POST', '/collections/shape/documents', who.engineer, { file: 'x' });
        expect(notMultipart.status).toBe(400);
        const form = new FormData();
        form.append('other', 'value');
        const res = await h.app.request('/collections/shape/documents', {
          method: 'POST',
          headers: { 'X-User-Id': 'eve', 'X-User-Role': 'svc-engineer' },
          body: form,
        });
        expect(res.status).toBe(400);
        expect((await res.json()).detail).toContain('"file"');
      });

      it('lets callers who may read a collection upload into it, except the read-only svc-viewer', async () => {
        await create('uploads', ['svc-analyst']);
        expect((await h.upload('uploads', people.user, { name: 'a.txt', bytes: text('hello') })).status).toBe(404);
        expect((await h.upload('uploads', people.analyst, { name: 'a.txt', bytes: text('hello world') })).status).toBe(201);
        await create('open-uploads');
        expect((await h.upload('open-uploads', people.viewer, { name: 'a.txt', bytes: text('hello') })).status).toBe(403);
        expect(await counts('open-uploads')).toEqual({ documents: 0, chunks: 0 });
      });
    });

    describe('delete', () => {
      it('removes the collection with its documents, chunks and embeddings', async () => {
        await create('doomed');
        await h.upload('doomed', who.engineer, { name: 'a.txt', bytes: text('alpha beta gamma '.repeat(100)) });
        await h.upload('doomed', who.engineer, { name: 'b.md', bytes: text('# Title\n\ndelta epsilon '.repeat(50)) });
        const store = await chunkStoreOf(h, 'doomed');
        expect(await storedChunkCount(h, store)).toBeGreaterThan(2);

        expect((await h.json('DELETE', '/collections/doomed', people.user)).status).toBe(403);
        const res = await h.json('DELETE', '/collections/doomed', who.engineer);
        expect(res.status).toBe(200);
        for (const table of ['retrieval_collections', 'retrieval_documents', 'retrieval_chunks']) {
          const column = table === 'retrieval_collections' ? 'slug' : 'collection_slug';
          const rows = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = 'doomed'`);
          expect(rows[0]!.n).toBe(0);
        }
        // and wherever the backend kept the chunks (a lake collection's table is dropped)
        expect(await storedChunkCount(h, store)).toBe(0);
        expect((await h.json('GET', '/collections/doomed', who.engineer)).status).toBe(404);
        expect((await h.json('DELETE', '/collections/doomed', who.engineer)).status).toBe(404);
      });
    });

    describe('audit', () => {
      it('lists retrievals newest first; an administrator sees everyone, others only their own', async () => {
        await create('audited');
        await h.upload('audited', who.engineer, { name: 'a.txt', bytes: text('audit trail test document') });
        await h.json('POST', '/collections/audited/query', people.user, { question: 'first question', top_k: 2 });
        await h.json('POST', '/collections/audited/query', people.analyst, { question: 'second question', top_k: 1 });

        const mine = await h.json('GET', '/audit/queries?limit=50', people.user);
        expect(mine.status).toBe(200);
        expect(mine.body.queries.every((q: { user: string }) => q.user === people.user.user)).toBe(true);
        expect(mine.body.queries[0]).toMatchObject({ collection: 'audited', question: 'first question', top_k: 2, roles: ['svc-user'] });
        expect(mine.body.queries[0].chunks[0]).toEqual({ chunk_id: expect.any(String), score: expect.any(Number) });

        const all = await h.json('GET', '/audit/queries?limit=2', who.admin);
        expect(all.body.queries.map((q: { question: string }) => q.question)).toEqual(['second question', 'first question']);
        expect((await h.json('GET', '/audit/queries?limit=0', who.admin)).status).toBe(400);
      });

      it('records the chunks and scores each mode answered; a query whose record cannot be written fails', async () => {
        await create('recorded');
        const sentences = Array.from({ length: 12 }, (_, i) => `Recorded sentence ${i} about the audit of mode ${i % 3}.`);
        await h.upload('recorded', who.engineer, { name: 'r.txt', bytes: text(sentences.join(' ')) });
        for (const mode of ['dense', 'keyword', 'hybrid']) {
          const asked = await h.json('POST', '/collections/recorded/query', people.user, {
            question: `audit of mode ${mode}`,
            top_k: 3,
            mode,
          });
          expect(asked.status).toBe(200);
          expect(asked.body.chunks.length).toBeGreaterThan(0);
          const [record] = (await h.json('GET', '/audit/queries?limit=1', people.user)).body.queries;
          expect(record.question).toBe(`audit of mode ${mode}`);
          expect(record.chunks).toEqual(
            asked.body.chunks.map((c: { chunk_id: string; score: number }) => ({ chunk_id: c.chunk_id, score: c.score })),
          );
        }
        // the audit chain refuses this question's record: the query fails, and no chunk is answered
        await h.db.exec(`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF NEW.detail->>'question' = 'unrecordable' THEN RAISE EXCEPTION 'audit refused'; END IF; RETURN NEW; END $$;
          CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_records FOR EACH ROW EXECUTE FUNCTION refuse_audit()`);
        try {
          for (const mode of ['dense', 'keyword', 'hybrid']) {
            const refused = await h.json('POST', '/collections/recorded/query', people.user, { question: 'unrecordable', top_k: 3, mode });
            expect(refused.status).toBe(500);
            expect(refused.body.chunks).toBeUndefined();
          }
        } finally {
          await h.db.exec('DROP TRIGGER refuse_audit ON audit_records; DROP FUNCTION refuse_audit()');
        }
        const [last] = (await h.json('GET', '/audit/queries?limit=1', people.user)).body.queries;
        expect(last.question).toBe('audit of mode hybrid');
      });
    });
  });
}
