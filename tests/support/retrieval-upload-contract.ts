import { watch, type FSWatcher } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/index.ts';
import { writePdf } from './pdf-writer.ts';
import type { OpenDb } from './retrieval-contract.ts';
import { retrievalHarness, who, type Identity, type RetrievalHarness } from './retrieval.ts';

// Where an upload is kept while it is ingested (issue 18): a file of at most SVC_UPLOAD_MEMORY_BYTES in memory, a
// larger one in a temporary file under SVC_UPLOAD_TMP_DIR; either way the same text is indexed and nothing stays
// behind. The body is received while the caller's access is checked, and that answer still comes first.

const MEMORY = 16 * 1024; // SVC_UPLOAD_MEMORY_BYTES here
const MAX = 256 * 1024; // SVC_MAX_UPLOAD_BYTES here
const BOUNDARY = 'svc-upload-contract';

const enc = (s: string) => new TextEncoder().encode(s);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** A multipart body with one part `file` (or `field`), written by hand so a test can also cut it short. */
const multipart = (bytes: Uint8Array, opts: { field?: string; name?: string; close?: boolean } = {}) =>
  concat(
    enc(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${opts.field ?? 'file'}"; filename="${opts.name ?? 'manual.pdf'}"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
    bytes,
    opts.close === false ? new Uint8Array(0) : enc(`\r\n--${BOUNDARY}--\r\n`),
  );

/** A ten-page digital PDF of about 28 KB, every word naming its page and place. */
const tenPages = writePdf(
  Array.from({ length: 10 }, (_, p) => ({
    lines: Array.from({ length: 40 }, (_, l) => Array.from({ length: 10 }, (_, k) => `p${p + 1}l${l}w${k}`).join(' ')),
  })),
);

export function retrievalUploadContract(label: string, openDb: OpenDb) {
  describe(`retrieval uploads in memory or in a temporary file (${label})`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let spool: string;
    /** SVC_UPLOAD_MEMORY_BYTES=16 KiB: the ten-page PDF goes to a temporary file. */
    let h: RetrievalHarness;
    /** SVC_UPLOAD_MEMORY_BYTES at the upload limit: every upload stays in memory. */
    let roomy: RetrievalHarness;

    beforeAll(async () => {
      const opened = await openDb();
      db = opened.db;
      cleanup = opened.cleanup;
      spool = await mkdtemp(join(tmpdir(), 'svc-upload-spool-'));
      const env = {
        SVC_MAX_UPLOAD_BYTES: String(MAX),
        SVC_UPLOAD_TMP_DIR: spool,
        SVC_CHUNK_SIZE_TOKENS: '50',
        SVC_CHUNK_OVERLAP_TOKENS: '10',
      };
      h = await retrievalHarness(db, { env: { ...env, SVC_UPLOAD_MEMORY_BYTES: String(MEMORY) } });
      roomy = await retrievalHarness(db, { env: { ...env, SVC_UPLOAD_MEMORY_BYTES: String(MAX) } });
      for (const [slug, roles] of [
        ['on-disk', []],
        ['in-memory', []],
        ['capped', []],
        ['open', []],
        ['control', []],
        ['names', []],
        ['closed', ['svc-analyst']],
      ] as const) {
        await h.json('POST', '/collections', who.engineer, { slug, name: slug, allowed_roles: roles });
      }
    });
    afterAll(async () => {
      await h?.close();
      await roomy?.close();
      await cleanup?.();
      if (spool) await rm(spool, { recursive: true, force: true });
    });

    const counts = async (slug: string) => {
      const res = await h.json('GET', `/collections/${slug}`, who.admin);
      return { documents: res.body.document_count, chunks: res.body.chunk_count };
    };
    const chunkTexts = async (documentId: string) =>
      (await db.query<{ text: string }>(`SELECT text FROM retrieval_chunks WHERE document_id = $1 ORDER BY ordinal`, [documentId])).map(
        (r) => r.text,
      );

    /** Names created or removed in the spool folder, as the file system reports them. */
    const spoolEvents = () => {
      const names: string[] = [];
      const watcher: FSWatcher = watch(spool, (_event, name) => {
        if (name) names.push(String(name));
      });
      let marks = 0;
      return {
        /** The names reported so far, once every event before this call has arrived (a sentinel file's comes after them). */
        async seen(): Promise<string[]> {
          const mark = `sentinel-${++marks}`;
          await writeFile(join(spool, mark), '');
          await expect.poll(() => names.includes(mark)).toBe(true);
          await rm(join(spool, mark));
          await expect.poll(() => names.filter((n) => n === mark).length).toBeGreaterThanOrEqual(2);
          return names.filter((n) => !n.startsWith('sentinel-'));
        },
        close: () => watcher.close(),
      };
    };

    it('keeps a file name as it was sent, in UTF-8, without the folders a client put before it', async () => {
      const names: [sent: string, kept: string][] = [
        ['Präsentation – März.md', 'Präsentation – März.md'],
        ['日本語のメモ.txt', '日本語のメモ.txt'],
        ['../../reports/naïve café.txt', 'naïve café.txt'],
      ];
      for (const [i, [sent, kept]] of names.entries()) {
        const res = await h.upload('names', who.engineer, {
          name: sent,
          type: 'text/plain',
          bytes: enc(`File name test ${i}: plain words.`),
        });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        expect(res.body.filename).toBe(kept);
      }
      // as curl -F writes it: the name's UTF-8 bytes in the part's header
      const raw = await h.app.request('/collections/names/documents', {
        method: 'POST',
        headers: {
          'X-User-Id': who.engineer.user,
          'X-User-Role': who.engineer.roles,
          'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
        },
        body: concat(
          enc(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="Übersicht.txt"\r\nContent-Type: text/plain\r\n\r\n`),
          enc('Raw UTF-8 name test: plain words.'),
          enc(`\r\n--${BOUNDARY}--\r\n`),
        ),
      });
      expect(raw.status).toBe(201);
      expect((await raw.json()).filename).toBe('Übersicht.txt');
    });

    it('indexes the same text whether the file was kept in memory or written to a temporary file, and leaves no file', async () => {
      expect(tenPages.length).toBeGreaterThan(MEMORY);
      expect(tenPages.length).toBeLessThan(MAX);
      const events = spoolEvents();
      try {
        const inMemory = await roomy.upload('in-memory', who.engineer, { name: 'manual.pdf', type: 'application/pdf', bytes: tenPages });
        expect(inMemory.status, JSON.stringify(inMemory.body)).toBe(201);
        // held in memory: the spool folder never saw a file
        expect(await events.seen()).toEqual([]);

        const onDisk = await h.upload('on-disk', who.engineer, { name: 'manual.pdf', type: 'application/pdf', bytes: tenPages });
        expect(onDisk.status, JSON.stringify(onDisk.body)).toBe(201);
        // larger than SVC_UPLOAD_MEMORY_BYTES: it went through a temporary file, since removed
        expect((await events.seen()).length).toBeGreaterThan(0);
        expect(await readdir(spool)).toEqual([]);

        for (const res of [inMemory, onDisk]) {
          expect(res.body).toMatchObject({ pages: 10, status: 'INDEXED', size_bytes: tenPages.length, duplicate: false });
        }
        expect(onDisk.body.sha256).toBe(inMemory.body.sha256);
        expect(onDisk.body.chunk_count).toBe(inMemory.body.chunk_count);
        const texts = await chunkTexts(inMemory.body.document_id);
        expect(texts.join(' ')).toContain('p1l0w0 p1l0w1');
        expect(texts.join(' ')).toContain('p10l39w9');
        expect(await chunkTexts(onDisk.body.document_id)).toEqual(texts);

        // both are found by a question about their last page
        for (const [slug, as] of [
          ['in-memory', roomy],
          ['on-disk', h],
        ] as const) {
          const found = await as.json('POST', `/collections/${slug}/query`, who.engineer, { question: 'p10l39w9', top_k: 1 });
          expect(found.body.chunks[0]).toMatchObject({ page: 10 });
        }
      } finally {
        events.close();
      }
    });

    it('refuses a file over SVC_MAX_UPLOAD_BYTES with the same 413 whether it was being kept in memory or on disk, leaving nothing', async () => {
      const over = new Uint8Array(MAX + 1000).fill(0x61);
      const detail = `The file is larger than the upload limit of ${MAX} bytes (SVC_MAX_UPLOAD_BYTES).`;
      for (const app of [h, roomy]) {
        const res = await app.upload('capped', who.engineer, { name: 'big.txt', type: 'text/plain', bytes: over });
        expect(res.status).toBe(413);
        expect(res.body.detail).toBe(detail);
      }
      expect(await counts('capped')).toEqual({ documents: 0, chunks: 0 });
      expect(await readdir(spool)).toEqual([]);
    });

    describe('a caller who may not upload', () => {
      /** `allowed`: what a caller who may upload gets for it. */
      type Body = { label: string; type: string; bytes: Uint8Array; multipart: boolean; allowed: number };
      const bodies: Body[] = [
        {
          label: 'a file larger than SVC_UPLOAD_MEMORY_BYTES',
          type: `multipart/form-data; boundary=${BOUNDARY}`,
          bytes: multipart(tenPages),
          multipart: true,
          allowed: 201,
        },
        {
          label: 'a file over SVC_MAX_UPLOAD_BYTES',
          type: `multipart/form-data; boundary=${BOUNDARY}`,
          bytes: multipart(new Uint8Array(MAX + 1000).fill(0x61), { name: 'big.txt' }),
          multipart: true,
          allowed: 413,
        },
        {
          label: 'a multipart body cut short',
          type: `multipart/form-data; boundary=${BOUNDARY}`,
          bytes: multipart(tenPages, { close: false }),
          multipart: true,
          allowed: 400,
        },
        {
          label: 'a multipart body without a file part',
          type: `multipart/form-data; boundary=${BOUNDARY}`,
          bytes: multipart(enc('hello'), { field: 'other' }),
          multipart: true,
          allowed: 400,
        },
        { label: 'a body that is not multipart', type: 'application/json', bytes: enc('{"file":"x"}'), multipart: false, allowed: 400 },
      ];

      /** Sends the body in 8 KiB pieces, noting when all of it has been read. */
      const send = (slug: string, as: Identity, body: Body) => sendVia(h, slug, as, body);
      const sendVia = async (app: RetrievalHarness, slug: string, as: Identity, body: Body, sending?: (read: () => boolean) => void) => {
        let at = 0;
        let read = false;
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (at >= body.bytes.length) {
              read = true;
              controller.close();
              return;
            }
            controller.enqueue(body.bytes.slice(at, at + 8192));
            at += 8192;
          },
        });
        sending?.(() => read);
        const res = await app.app.request(`/collections/${slug}/documents`, {
          method: 'POST',
          headers: { 'X-User-Id': as.user, 'X-User-Role': as.roles, 'Content-Type': body.type },
          body: stream,
          duplex: 'half',
        } as RequestInit);
        const { requestId: _, ...problem } = await res.json();
        return { status: res.status, problem, read: () => read };
      };

      it('(a caller who may upload gets what each body deserves: the refusals below are not for the body)', async () => {
        for (const body of bodies) {
          const res = await send('control', who.engineer, body);
          expect(res.status, `${body.label}: ${JSON.stringify(res.problem)}`).toBe(body.allowed);
        }
        expect(await counts('control')).toMatchObject({ documents: 1 });
        expect(await readdir(spool)).toEqual([]);
      });

      it.each([
        { who: 'svc-viewer on an open collection', as: who.viewer, slug: 'open', status: 403 },
        { who: 'a caller outside the collection’s roles', as: who.user, slug: 'closed', status: 404 },
        { who: 'any caller, for a collection that does not exist', as: who.engineer, slug: 'nowhere', status: 404 },
      ])(
        '$who gets the same $status whatever the body, its upload is dropped and its body read to the end',
        async ({ as, slug, status }) => {
          const reference = await h.upload(slug, as, { name: 'a.txt', type: 'text/plain', bytes: enc('hello world') });
          expect(reference.status).toBe(status);
          const { requestId: _, ...expected } = reference.body;
          for (const body of bodies) {
            const res = await send(slug, as, body);
            expect(res.status, body.label).toBe(status);
            expect(res.problem, body.label).toEqual(expected);
            // the rest of the body is read and dropped (a body never read is left to Node, as before)
            if (body.multipart) await expect.poll(res.read, { message: body.label }).toBe(true);
            expect(await readdir(spool), body.label).toEqual([]);
          }
          if (slug !== 'nowhere') expect(await counts(slug)).toEqual({ documents: 0, chunks: 0 });
        },
      );

      it('is refused the same when the refusal comes after the whole file was received, and the file is removed', async () => {
        // the collection's lookup answers only once the body has been read (and a moment more, for the file's close)
        let held: { read: () => boolean } | undefined;
        const slow = new Proxy(db, {
          get(target, prop) {
            const value = Reflect.get(target, prop, target);
            if (prop !== 'query' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
            return async (text: string, ...rest: unknown[]) => {
              if (held && text.includes('FROM retrieval_collections WHERE slug')) {
                await expect.poll(() => held?.read()).toBe(true);
                await new Promise((resolve) => setTimeout(resolve, 200));
              }
              return value.call(target, text, ...rest);
            };
          },
        });
        const late = await retrievalHarness(slow, {
          env: { SVC_UPLOAD_TMP_DIR: spool, SVC_UPLOAD_MEMORY_BYTES: String(MEMORY), SVC_MAX_UPLOAD_BYTES: String(MAX) },
        });
        try {
          const events = spoolEvents();
          try {
            const body = bodies[0]!; // larger than SVC_UPLOAD_MEMORY_BYTES: written to a file
            const res = sendVia(late, 'open', who.viewer, body, (read) => {
              held = { read };
            });
            expect((await res).status).toBe(403);
            // the file was written, then removed before the answer
            expect((await events.seen()).length).toBeGreaterThan(0);
            expect(await readdir(spool)).toEqual([]);
          } finally {
            events.close();
          }
        } finally {
          held = undefined;
          await late.close();
        }
      });
    });

    describe('an upload refused or failed on the way', () => {
      // what uploads left in each place an upload writes: the documents' rows, their pages and chunks, their originals
      const leftIn = async (slug: string) => {
        const [rows] = await db.query<{ documents: number; pages: number; chunks: number }>(
          `SELECT (SELECT count(*) FROM retrieval_documents WHERE collection_slug = $1)::int AS documents,
                  (SELECT count(*) FROM retrieval_document_pages p JOIN retrieval_documents d ON d.id = p.document_id
                    WHERE d.collection_slug = $1)::int AS pages,
                  (SELECT count(*) FROM retrieval_chunks WHERE collection_slug = $1)::int AS chunks`,
          [slug],
        );
        return { ...rows!, originals: (await h.deps.originals.listTree(`${slug}/`)).length };
      };
      /** What is left in the caller's embeddings bucket; undefined if they were never charged. */
      const bucketOf = async (user: string) =>
        (
          await db.query<{ tokens: number }>(
            `SELECT tokens FROM limit_buckets WHERE user_id = $1 AND service = 'retrieval' AND action = 'embedding'`,
            [user],
          )
        )[0]?.tokens;

      it('writes and charges nothing when the refusal comes after the file was received and its extraction started', async () => {
        // the collection's lookup, which the refusal needs, answers only well after the whole body has been read
        let read = false;
        const slow = new Proxy(db, {
          get(target, prop) {
            const value = Reflect.get(target, prop, target);
            if (prop !== 'query' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
            return async (text: string, ...rest: unknown[]) => {
              if (text.includes('FROM retrieval_collections WHERE slug')) {
                await expect.poll(() => read).toBe(true);
                await new Promise((resolve) => setTimeout(resolve, 300));
              }
              return value.call(target, text, ...rest);
            };
          },
        });
        const late = await retrievalHarness(slow, { originals: h.deps.originals, env: { SVC_MAX_UPLOAD_BYTES: String(MAX) } });
        try {
          let sent = false;
          const res = await late.app.request('/collections/open/documents', {
            method: 'POST',
            headers: {
              'X-User-Id': who.viewer.user,
              'X-User-Role': who.viewer.roles,
              'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
            },
            body: new ReadableStream<Uint8Array>({
              pull(controller) {
                if (sent) {
                  read = true;
                  controller.close();
                } else controller.enqueue(multipart(tenPages, { name: 'refused.pdf' }));
                sent = true;
              },
            }),
            duplex: 'half',
          } as RequestInit);
          expect(res.status).toBe(403);
          expect(await leftIn('open')).toEqual({ documents: 0, pages: 0, chunks: 0, originals: 0 });
          expect(await bucketOf(who.viewer.user)).toBeUndefined();
        } finally {
          await late.close();
        }
      });

      it("writes nothing and takes nothing from the bucket when the upload is over the caller's embeddings limit", async () => {
        const limited = await retrievalHarness(db, {
          originals: h.deps.originals,
          env: {
            SVC_MAX_UPLOAD_BYTES: String(MAX),
            SVC_CHUNK_SIZE_TOKENS: '50',
            SVC_CHUNK_OVERLAP_TOKENS: '10',
            SVC_LIMIT_RETRIEVAL_EMBEDDINGS: '150/h', // the ten pages make about 100 chunks: one upload, not two
          },
        });
        try {
          await limited.json('POST', '/collections', who.engineer, { slug: 'limited', name: 'limited', allowed_roles: [] });
          const first = await limited.upload('limited', who.analyst, { name: 'first.pdf', type: 'application/pdf', bytes: tenPages });
          expect(first.status).toBe(201);
          const left = await bucketOf(who.analyst.user);
          // new bytes, as many chunks
          const over = await limited.upload('limited', who.analyst, {
            name: 'second.pdf',
            type: 'application/pdf',
            bytes: concat(tenPages, enc('\n')),
          });
          expect(over.status).toBe(429);
          expect(await leftIn('limited')).toEqual({ documents: 1, pages: 10, chunks: first.body.chunk_count, originals: 1 });
          expect(await bucketOf(who.analyst.user)).toBe(left);
        } finally {
          await limited.close();
        }
      });

      it('leaves no row, page, chunk or original when the chunks cannot be written, and the collection does not move', async () => {
        await h.json('POST', '/collections', who.engineer, { slug: 'failing', name: 'failing', allowed_roles: [] });
        const version = async () =>
          (await db.query<{ version: number }>(`SELECT version FROM retrieval_collections WHERE slug = 'failing'`))[0]!.version;
        const before = await version();
        await db.exec(`
          CREATE FUNCTION refuse_failing_chunks() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'chunks refused for the test'; END $$;
          CREATE TRIGGER refuse_failing_chunks BEFORE INSERT ON retrieval_chunks
            FOR EACH ROW WHEN (NEW.collection_slug = 'failing') EXECUTE FUNCTION refuse_failing_chunks();`);
        try {
          const res = await h.upload('failing', who.engineer, { name: 'failing.pdf', type: 'application/pdf', bytes: tenPages });
          expect(res.status).toBe(500);
          expect(await leftIn('failing')).toEqual({ documents: 0, pages: 0, chunks: 0, originals: 0 });
          expect(await version()).toBe(before);
        } finally {
          await db.exec('DROP TRIGGER refuse_failing_chunks ON retrieval_chunks; DROP FUNCTION refuse_failing_chunks();');
        }
        // the same file goes in once the chunks can be written
        expect((await h.upload('failing', who.engineer, { name: 'failing.pdf', type: 'application/pdf', bytes: tenPages })).status).toBe(
          201,
        );
      });
    });
  });
}
