import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { docx } from '../fixtures/ooxml.ts';
import type { OpenDb } from './retrieval-contract.ts';
import { retrievalHarness, who, type Identity, type RetrievalHarness } from './retrieval.ts';
import { storedChunks } from './retrieval-stored.ts';

// Watched sources through HTTP (issue 16): a folder (PGlite and Postgres) or a MinIO prefix (Postgres), scanned on a
// schedule by whichever replica holds the lease. Time is real: each check polls until the scan it waits for shows,
// within a bound far above the interval; nothing asserts how long a scan took.

/** A place the service may watch, and a test's hands on it. */
export type WatchedPlace = {
  /** Settings that make it watchable: SVC_WATCH_ROOTS and, for S3, the endpoint and keys. */
  env: Record<string, string>;
  /** A fresh source under the root for one test, written and removed through the test's own client. */
  source(
    name: string,
  ): Promise<{ uri: string; put(path: string, body: string | Uint8Array): Promise<void>; remove(path: string): Promise<void> }>;
  /** A URI of the same kind that lies outside every root. */
  outside: string;
};

const enc = (s: string) => new TextEncoder().encode(s);
const poll = { timeout: 30_000, interval: 100 };
/** Several scans and their checks in one test; each wait is bounded by `poll`. */
const LONG = 180_000;

/**
 * `env` is added to every replica's settings (SVC_RAG_DEFAULT_BACKEND=lake and Trino's: every collection on the lake),
 * `tokens` are sent as X-User-Token, and `asker` asks the questions (default uma; on the lake, someone Trino lets read it).
 */
export function retrievalWatchContract(
  label: string,
  openDb: OpenDb,
  place: () => Promise<WatchedPlace & { cleanup(): Promise<void> }>,
  opts: { env?: Record<string, string>; tokens?: Record<string, string>; asker?: Identity } = {},
) {
  const asker = opts.asker ?? who.user;
  const harness = (db: RetrievalHarness['db'], env: Record<string, string>, watch?: { owner?: string }) =>
    retrievalHarness(db, {
      env: { ...opts.env, ...env },
      ...(opts.tokens ? { tokens: opts.tokens } : {}),
      ...(watch ? { watch } : {}),
    });
  describe(`watched sources (${label})`, () => {
    let db: Awaited<ReturnType<OpenDb>>;
    let where: WatchedPlace & { cleanup(): Promise<void> };
    let env: Record<string, string>;
    const harnesses: RetrievalHarness[] = [];
    let admin: RetrievalHarness; // no watcher: reads and writes through HTTP only

    beforeAll(async () => {
      db = await openDb();
      where = await place();
      env = { ...where.env, SVC_WATCH_POLL_SECONDS: '1', SVC_CHUNK_SIZE_TOKENS: '60', SVC_CHUNK_OVERLAP_TOKENS: '10' };
      admin = await replica({ watching: false });
    });
    // a test's replicas stop with it, so a failed test cannot leave a watcher scanning the next test's sources
    afterEach(async () => {
      for (const h of harnesses.splice(0).filter((h) => h !== admin)) await h.close();
      harnesses.push(admin);
    });
    afterAll(async () => {
      for (const h of harnesses) await h.close();
      await where?.cleanup();
      await db?.cleanup();
    });

    async function replica(opts: { watching: boolean; owner?: string; env?: Record<string, string> }): Promise<RetrievalHarness> {
      const h = await harness(db.db, { ...env, ...opts.env }, opts.watching ? { ...(opts.owner ? { owner: opts.owner } : {}) } : undefined);
      harnesses.push(h);
      return h;
    }
    const create = (slug: string, watch: unknown, as = who.engineer) =>
      admin.json('POST', '/collections', as, { slug, name: slug, allowed_roles: [], ...(watch === undefined ? {} : { watch }) });
    const documents = async (slug: string) =>
      (
        (await admin.json('GET', `/collections/${slug}/documents`, who.admin)).body.documents as {
          document_id: string;
          filename: string;
          uploaded_by: string;
        }[]
      )
        .map((d) => d.filename)
        .sort();
    const status = async (slug: string) => (await admin.json('GET', `/collections/${slug}/watch`, who.admin)).body;
    const find = async (slug: string, question: string) =>
      (await admin.json('POST', `/collections/${slug}/query`, asker, { question, mode: 'keyword', top_k: 3 })).body.chunks as {
        filename: string;
        text: string;
      }[];
    /** The replica's files by outcome, read from its /metrics. */
    async function fileOutcomes(h: RetrievalHarness): Promise<Record<string, number>> {
      const text = await (await h.app.request('/metrics')).text();
      const out: Record<string, number> = {};
      for (const m of text.matchAll(/^retrieval_watch_files_total\{[^}]*outcome="(\w+)"[^}]*\} (\d+)/gm)) out[m[1]!] = Number(m[2]);
      return out;
    }

    it('refuses a URI outside SVC_WATCH_ROOTS with 400 naming the setting, and stores nothing', async () => {
      const res = await create('outside', { uri: where.outside, interval_seconds: 60 });
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain('SVC_WATCH_ROOTS');
      expect(res.body.errors).toEqual([expect.objectContaining({ location: 'json.watch.uri' })]);
      expect((await admin.json('GET', '/collections/outside', who.admin)).status).toBe(404);

      const bad = await create('bad-interval', { uri: where.outside, interval_seconds: 0 });
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([expect.objectContaining({ location: 'json.watch.interval_seconds' })]);

      const off = await harness(db.db, {});
      harnesses.push(off);
      const source = await where.source('off');
      const refused = await off.json('POST', '/collections', who.engineer, {
        slug: 'off',
        name: 'off',
        allowed_roles: [],
        watch: { uri: source.uri, interval_seconds: 60 },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/Watching is off.*SVC_WATCH_ROOTS is empty/);
    });

    it('lets only collection managers set, change or stop a watch, and shows it on the collection', async () => {
      const source = await where.source('managed');
      expect((await create('managed', undefined)).status).toBe(201);
      const patch = (as: typeof who.user, body: unknown) => admin.json('PATCH', '/collections/managed', as, body);
      expect((await patch(who.analyst, { watch: { uri: source.uri, interval_seconds: 60 } })).status).toBe(403);
      expect((await patch(who.viewer, { watch: { uri: source.uri, interval_seconds: 60 } })).status).toBe(403);
      const set = await patch(who.engineer, { watch: { uri: source.uri, interval_seconds: 60 } });
      expect(set.status).toBe(200);
      expect(set.body.watch).toEqual({ uri: source.uri, interval_seconds: 60 });
      expect((await patch(who.engineer, { watch: { uri: where.outside, interval_seconds: 60 } })).status).toBe(400);
      expect((await admin.json('GET', '/collections/managed', who.user)).body.watch).toEqual({ uri: source.uri, interval_seconds: 60 });
      expect((await admin.json('GET', '/collections/managed/watch', who.user)).body).toMatchObject({
        uri: source.uri,
        interval_seconds: 60,
        last_scan_at: null,
      });
      expect((await patch(who.engineer, { bogus: 1 })).status).toBe(400);
      const stopped = await patch(who.engineer, { watch: null, description: 'no longer watched' });
      expect(stopped.body).toMatchObject({ watch: null, description: 'no longer watched', allowed_roles: [] });
      // the collection still has a watch status: watching nothing
      expect((await admin.json('GET', '/collections/managed/watch', who.user)).body).toMatchObject({
        uri: null,
        next_scan_at: null,
        failures: [],
      });
    });

    it(
      'reflects files added, changed, removed and broken within an interval, beside uploads by hand',
      async () => {
        const source = await where.source('docs');
        await source.put('alpha.txt', 'Runbook: ERR-4471 means the replication slot is full.');
        await source.put('notes/beta.md', '# Beta\n\nThe beta cluster runs in the north region.');
        await source.put('broken.docx', 'PK this is not a zip archive at all');
        await source.put('old.doc', new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]));
        const h = await replica({ watching: true });
        expect((await create('docs', { uri: source.uri, interval_seconds: 1 })).status).toBe(201);
        // a document uploaded by hand lives beside the watched ones
        expect(
          (
            await admin.upload('docs', who.engineer, {
              name: 'by-hand.txt',
              bytes: enc('Uploaded by hand: the gamma key rotates monthly.'),
            })
          ).status,
        ).toBe(201);

        await expect.poll(() => documents('docs'), poll).toEqual(['alpha.txt', 'by-hand.txt', 'notes/beta.md']);
        await expect
          .poll(async () => (await status('docs')).failures.map((f: { path: string }) => f.path), poll)
          .toEqual(['broken.docx', 'old.doc']);
        // a file's failure is recorded as it is decided, the scan's counts when it ends
        await expect.poll(async () => (await status('docs')).counts.seen, poll).toBe(4);
        const seen = await status('docs');
        expect(seen.counts).toMatchObject({ seen: 4, ingested: 2, failed: 2 });
        expect(seen.failures.find((f: { path: string }) => f.path === 'old.doc').reason).toMatch(/\.doc/);
        expect(
          seen.failures.every(
            (f: { reason: string; attempts: number; retry_at: string }) => f.reason.length > 10 && f.attempts === 1 && f.retry_at,
          ),
        ).toBe(true);
        expect((await find('docs', 'ERR-4471'))[0]!.filename).toBe('alpha.txt');
        const docs = (await admin.json('GET', '/collections/docs/documents', who.admin)).body.documents as {
          filename: string;
          uploaded_by: string;
        }[];
        expect(docs.find((d) => d.filename === 'alpha.txt')!.uploaded_by).toBe(`watch:${source.uri}`);

        // changed: the new text replaces the old; removed: gone; fixed: indexed at once, whatever its backoff
        await source.put('alpha.txt', 'Runbook: ERR-5000 means the disk is read-only.');
        await source.remove('notes/beta.md');
        await source.put('broken.docx', await docx([{ paragraph: 'A real Word file now: plain words about the delta service.' }]));
        await source.remove('old.doc');
        await expect.poll(() => documents('docs'), poll).toEqual(['alpha.txt', 'broken.docx', 'by-hand.txt']);
        await expect.poll(async () => (await find('docs', 'ERR-5000'))[0]?.filename, poll).toBe('alpha.txt');
        expect((await find('docs', 'ERR-4471')).some((c) => c.text.includes('ERR-4471'))).toBe(false);
        await expect.poll(async () => (await status('docs')).failures, poll).toEqual([]);
        // a watched file is stored as an upload is: each chunk beside the row code the in-memory copy loads (on the
        // lake, beside its embedding)
        const coded = await storedChunks(admin, 'docs');
        expect(coded!.chunks).toBeGreaterThan(2);
        expect(coded!.codes).toBe(coded!.chunks);
        const outcomes = await fileOutcomes(h);
        expect(outcomes.ingested).toBe(3); // alpha, beta, then the fixed file
        expect(outcomes.updated).toBe(1);
        expect(outcomes.deleted).toBe(1);

        // the same bytes as the hand upload point at it; when that file goes, the hand upload stays
        await source.put('copy-of-hand.txt', 'Uploaded by hand: the gamma key rotates monthly.');
        await expect.poll(async () => (await status('docs')).counts.seen, poll).toBe(3);
        await source.remove('copy-of-hand.txt');
        await expect.poll(async () => (await status('docs')).counts.seen, poll).toBe(2);
        expect(await documents('docs')).toEqual(['alpha.txt', 'broken.docx', 'by-hand.txt']);
      },
      LONG,
    );

    it(
      'reads a folder several files at a time: each file once, copies of one content sharing its document',
      async () => {
        const source = await where.source('bulk');
        const distinct = Array.from({ length: 9 }, (_, i) => `part-${i}.txt`);
        for (const [i, f] of distinct.entries()) await source.put(f, `Bulk file ${i}: the pump P-${300 + i} sits in hall ${i}.`);
        const copies = ['copy-a.txt', 'copy-b.txt', 'copy-c.txt'];
        for (const f of copies) await source.put(f, 'One content three times: the spare valve V-77 is on shelf nine.');
        await source.put('broken.docx', 'PK not a zip archive');
        const h = await replica({ watching: true, env: { SVC_WATCH_CONCURRENCY: '4' } });
        expect((await create('bulk', { uri: source.uri, interval_seconds: 60 })).status).toBe(201);
        await expect.poll(async () => (await status('bulk')).counts?.seen, poll).toBe(13);
        const names = await documents('bulk');
        // the copies raced to one document, named after whichever committed first
        expect(names.filter((n) => !copies.includes(n))).toEqual(distinct);
        expect(names.filter((n) => copies.includes(n))).toHaveLength(1);
        const seen = await status('bulk');
        expect(seen.counts).toMatchObject({ seen: 13, ingested: 12, updated: 0, failed: 1 });
        expect(seen.failures.map((f: { path: string }) => f.path)).toEqual(['broken.docx']);
        expect((await find('bulk', 'V-77'))[0]!.text).toContain('spare valve V-77');
        expect((await fileOutcomes(h)).ingested).toBe(12);
      },
      LONG,
    );

    it(
      're-ingests nothing after a restart, and two replicas ingest each file once',
      async () => {
        const source = await where.source('shared');
        const files = Array.from({ length: 6 }, (_, i) => `file-${i}.txt`);
        for (const [i, f] of files.entries()) await source.put(f, `Shared file number ${i}: code PART-${1000 + i} is in bin ${i}.`);
        const [one, two] = [
          await replica({ watching: true, owner: 'replica-one' }),
          await replica({ watching: true, owner: 'replica-two' }),
        ];
        expect((await create('shared', { uri: source.uri, interval_seconds: 1 })).status).toBe(201);
        await expect.poll(() => documents('shared'), poll).toEqual(files);
        const ids = (await admin.json('GET', '/collections/shared/documents', who.admin)).body.documents
          .map((d: { document_id: string }) => d.document_id)
          .sort();
        // both replicas scan, one at a time; between them each file was read and ingested once
        const firstScan = (await status('shared')).last_scan_at;
        await expect.poll(async () => (await status('shared')).last_scan_at, poll).not.toBe(firstScan);
        const ingested = (await fileOutcomes(one)).ingested ?? 0;
        expect(ingested + ((await fileOutcomes(two)).ingested ?? 0)).toBe(files.length);

        // a restart: a new replica on the same database reads the state and ingests nothing
        await one.close();
        await two.close();
        harnesses.splice(harnesses.indexOf(one), 1);
        harnesses.splice(harnesses.indexOf(two), 1);
        const restarted = await replica({ watching: true, owner: 'replica-three' });
        const before = (await status('shared')).last_scan_at;
        await expect.poll(async () => (await status('shared')).last_scan_at, poll).not.toBe(before);
        expect((await fileOutcomes(restarted)).unchanged).toBeGreaterThanOrEqual(files.length);
        expect((await fileOutcomes(restarted)).ingested ?? 0).toBe(0);
        expect(
          (await admin.json('GET', '/collections/shared/documents', who.admin)).body.documents
            .map((d: { document_id: string }) => d.document_id)
            .sort(),
        ).toEqual(ids);
        expect((await status('shared')).counts).toMatchObject({ seen: 6, ingested: 0, updated: 0, deleted: 0, failed: 0 });
      },
      LONG,
    );
  });
}
