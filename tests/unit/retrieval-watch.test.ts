import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { createOfflineEmbedder, type Embedder } from '../../src/platform/gateway/index.ts';
import { loadRetrievalConfig } from '../../src/retrieval/config.ts';
import type { ScanControl } from '../../src/retrieval/watch/scan.ts';
import { openSource } from '../../src/retrieval/watch/source.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { retrievalWatchContract } from '../support/retrieval-watch-contract.ts';
import { folderPlace } from '../support/watched-places.ts';

const pglite = async () => {
  const db = await openPglite({});
  return { db, cleanup: () => db.close() };
};

retrievalWatchContract('folder, PGlite', pglite, folderPlace);

describe('SVC_WATCH_ROOTS', () => {
  it.each(['relative/folder', 's3://Bad_Bucket/x', 'ftp://host/x'])('stops start-up on %j, naming the setting', (entry) => {
    expect(() => loadRetrievalConfig({ SVC_WATCH_ROOTS: entry })).toThrow(/SVC_WATCH_ROOTS/);
  });

  it('takes folders, file:// URIs and S3 prefixes', () => {
    expect(loadRetrievalConfig({ SVC_WATCH_ROOTS: '/srv/a, file:///srv/b,s3://bucket/in/here' }).watch.roots).toEqual([
      { kind: 'folder', path: '/srv/a' },
      { kind: 'folder', path: '/srv/b' },
      { kind: 's3', bucket: 'bucket', prefix: 'in/here/' },
    ]);
  });
});

describe('watched folders and symbolic links', () => {
  let place: Awaited<ReturnType<typeof folderPlace>>;
  let db: Awaited<ReturnType<typeof pglite>>;
  let h: RetrievalHarness;
  beforeAll(async () => {
    place = await folderPlace();
    db = await pglite();
    h = await retrievalHarness(db.db, { env: { ...place.env, SVC_WATCH_POLL_SECONDS: '1' }, watch: {} });
  });
  afterAll(async () => {
    await h?.close();
    await db?.cleanup();
    await place?.cleanup();
  });

  it('refuses a watch whose folder leads out of the roots through a link', async () => {
    const link = join(place.root, 'escape');
    await symlink(join(place.root, '..', 'elsewhere'), link);
    const res = await h.json('POST', '/collections', who.engineer, {
      slug: 'escape',
      name: 'escape',
      allowed_roles: [],
      watch: { uri: pathToFileURL(link).href, interval_seconds: 5 },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/symbolic link.*SVC_WATCH_ROOTS/);
    // a sibling folder whose name starts with the root's is not under it
    const sibling = `${place.root}-twin`;
    await mkdir(sibling);
    const twin = await h.json('POST', '/collections', who.engineer, {
      slug: 'twin',
      name: 'twin',
      allowed_roles: [],
      watch: { uri: pathToFileURL(sibling).href, interval_seconds: 5 },
    });
    expect(twin.status).toBe(400);
  });

  it('lets the old source go when a watch moves to another folder', async () => {
    const [a, b] = [await place.source('move-a'), await place.source('move-b')];
    await a.put('from-a.txt', 'Only in folder A: the kappa relay.');
    await b.put('from-b.txt', 'Only in folder B: the lambda relay.');
    expect(
      (
        await h.json('POST', '/collections', who.engineer, {
          slug: 'moving',
          name: 'moving',
          allowed_roles: [],
          watch: { uri: a.uri, interval_seconds: 1 },
        })
      ).status,
    ).toBe(201);
    const names = async () =>
      (await h.json('GET', '/collections/moving/documents', who.user)).body.documents.map((d: { filename: string }) => d.filename);
    await expect.poll(names, { timeout: 30_000 }).toEqual(['from-a.txt']);
    expect((await h.json('PATCH', '/collections/moving', who.engineer, { watch: { uri: b.uri, interval_seconds: 1 } })).status).toBe(200);
    await expect.poll(names, { timeout: 30_000 }).toEqual(['from-b.txt']);
    expect((await h.json('GET', '/collections/moving/watch', who.user)).body).toMatchObject({ uri: b.uri, failures: [] });
  });

  it('skips a symbolic link inside the watched folder, and reports it', async () => {
    const source = await place.source('links');
    await source.put('real.txt', 'A real file about the omega pump.');
    await writeFile(join(place.root, '..', 'elsewhere', 'secret.txt'), 'The vault code is 4242.');
    await symlink(join(place.root, '..', 'elsewhere', 'secret.txt'), join(place.root, 'links', 'secret.txt'));
    await symlink(join(place.root, '..', 'elsewhere'), join(place.root, 'links', 'outside-dir'));
    expect(
      (
        await h.json('POST', '/collections', who.engineer, {
          slug: 'links',
          name: 'links',
          allowed_roles: [],
          watch: { uri: source.uri, interval_seconds: 1 },
        })
      ).status,
    ).toBe(201);
    // once the first scan has ended (its files are read a few at a time, so a link's row can come before a file's)
    await expect
      .poll(async () => (await h.json('GET', '/collections/links/watch', who.user)).body.last_scan_at, { timeout: 30_000 })
      .not.toBeNull();
    const watch = (await h.json('GET', '/collections/links/watch', who.user)).body;
    expect(watch.failures.map((f: { path: string }) => f.path)).toEqual(['outside-dir', 'secret.txt']);
    expect(watch.failures.every((f: { status: string; reason: string }) => f.status === 'skipped' && /symbolic link/.test(f.reason))).toBe(
      true,
    );
    const docs = (await h.json('GET', '/collections/links/documents', who.user)).body.documents.map(
      (d: { filename: string }) => d.filename,
    );
    expect(docs).toEqual(['real.txt']);
    const found = await h.json('POST', '/collections/links/query', who.user, { question: 'vault code 4242', mode: 'keyword' });
    expect(found.body.chunks).toEqual([]);
  });
});

describe('a file removed between the listing and its read', () => {
  it('is one failure the scan records, and the other files land', async () => {
    const place = await folderPlace();
    const db = await pglite();
    // The real folder store, wrapped so that the scan's listing is followed at once by the removal of one listed
    // file: the race a user deleting a file mid-scan runs, made certain.
    let removed = false;
    const open: ScanControl['open'] = (source, s3) => {
      const store = openSource(source, s3);
      return {
        ...store,
        async listTree(prefix) {
          const listing = await store.listTree(prefix);
          if (!removed && source.kind === 'folder') {
            removed = true;
            await rm(join(source.path, 'gone.txt'));
          }
          return listing;
        },
      };
    };
    const h = await retrievalHarness(db.db, { env: { ...place.env, SVC_WATCH_POLL_SECONDS: '1' }, watch: { open } });
    try {
      const source = await place.source('race');
      for (const name of ['a.txt', 'b.txt', 'gone.txt', 'c.txt']) await source.put(name, `The file ${name} names the gauge ${name}.`);
      const watch = { uri: source.uri, interval_seconds: 3600 };
      expect((await h.json('POST', '/collections', who.engineer, { slug: 'race', name: 'race', allowed_roles: [], watch })).status).toBe(
        201,
      );
      await expect
        .poll(async () => (await h.json('GET', '/collections/race/watch', who.user)).body.last_scan_at, { timeout: 30_000 })
        .not.toBeNull();
      const status = (await h.json('GET', '/collections/race/watch', who.user)).body;
      expect(removed).toBe(true);
      expect(status.error).toBeNull();
      expect(status.counts).toEqual({ seen: 4, ingested: 3, updated: 0, deleted: 0, failed: 1 });
      expect(status.failures).toEqual([
        { path: 'gone.txt', status: 'failed', reason: expect.stringMatching(/removed or moved/), attempts: 1, retry_at: null },
      ]);
      const docs = (await h.json('GET', '/collections/race/documents', who.user)).body.documents.map(
        (d: { filename: string }) => d.filename,
      );
      expect(docs.sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);
    } finally {
      await h.close();
      await db.cleanup();
      await place.cleanup();
    }
  });
});

describe('a stopped scan', () => {
  it('is picked up by the next replica where it stopped, with no file ingested twice', async () => {
    const place = await folderPlace();
    const db = await pglite();
    // a slow gateway, so the first replica is stopped in the middle of its scan
    const offline = createOfflineEmbedder(768);
    const slow: Embedder = { ...offline, embed: async (texts) => (await new Promise((r) => setTimeout(r, 250)), offline.embed(texts)) };
    const env = { ...place.env, SVC_WATCH_POLL_SECONDS: '1' };
    const first = await retrievalHarness(db.db, { env, embedder: slow, watch: { owner: 'first' } });
    let second: RetrievalHarness | undefined;
    try {
      const source = await place.source('many');
      const files = Array.from({ length: 12 }, (_, i) => `doc-${String(i).padStart(2, '0')}.txt`);
      for (const [i, f] of files.entries()) await source.put(f, `Document ${i} names the widget W-${i} and nothing else.`);
      expect(
        (
          await first.json('POST', '/collections', who.engineer, {
            slug: 'many',
            name: 'many',
            allowed_roles: [],
            watch: { uri: source.uri, interval_seconds: 1 },
          })
        ).status,
      ).toBe(201);
      const names = async () =>
        (await first.json('GET', '/collections/many/documents', who.admin)).body.documents
          .map((d: { filename: string }) => d.filename)
          .sort();
      await expect.poll(async () => (await names()).length, { timeout: 30_000, interval: 20 }).toBeGreaterThan(0);
      await first.close(); // stops after the file it is on, and hands the lease back
      const done = await names();
      expect(done.length).toBeLessThan(files.length);

      second = await retrievalHarness(db.db, { env, embedder: slow, watch: { owner: 'second' } });
      await expect.poll(names, { timeout: 60_000, interval: 100 }).toEqual(files);
      // every file ingested once in all: what the first did before it stopped, the rest by the second (whose counter
      // moves just after a document is visible, so it is polled)
      const ingestedBy = async (replica: RetrievalHarness) => {
        const metrics = await (await replica.app.request('/metrics')).text();
        return Number(/retrieval_watch_files_total\{[^}]*outcome="ingested"[^}]*\} (\d+)/.exec(metrics)?.[1] ?? 0);
      };
      expect(await ingestedBy(first)).toBe(done.length);
      const picker = second;
      await expect.poll(() => ingestedBy(picker), { timeout: 10_000 }).toBe(files.length - done.length);
      expect(await names()).toEqual(files);
    } finally {
      await second?.close();
      await first.close();
      await db.cleanup();
      await place.cleanup();
    }
  }, 120_000);
});

describe('SVC_WATCH_CONCURRENCY', () => {
  it.each([
    ['1', 1],
    ['3', 3],
  ])(
    'at %s, has that many files of a scan at the embedding gateway at once, at most',
    async (setting, most) => {
      const place = await folderPlace();
      const db = await pglite();
      // an embedder that holds each call a while and counts the calls it holds
      const offline = createOfflineEmbedder(768);
      let held = 0;
      let peak = 0;
      const counting: Embedder = {
        ...offline,
        embed: async (texts) => {
          peak = Math.max(peak, ++held);
          await new Promise((r) => setTimeout(r, 100));
          held--;
          return offline.embed(texts);
        },
      };
      const h = await retrievalHarness(db.db, {
        env: { ...place.env, SVC_WATCH_POLL_SECONDS: '1', SVC_WATCH_CONCURRENCY: setting },
        embedder: counting,
        watch: {},
      });
      try {
        const source = await place.source('lanes');
        const files = Array.from({ length: 8 }, (_, i) => `lane-${i}.txt`);
        for (const [i, f] of files.entries()) await source.put(f, `Lane file ${i} lists the crate C-${i}.`);
        const watch = { uri: source.uri, interval_seconds: 60 };
        expect(
          (await h.json('POST', '/collections', who.engineer, { slug: 'lanes', name: 'lanes', allowed_roles: [], watch })).status,
        ).toBe(201);
        await expect
          .poll(async () => (await h.json('GET', '/collections/lanes/watch', who.admin)).body.counts?.ingested, { timeout: 30_000 })
          .toBe(files.length);
        expect(peak).toBe(most);
      } finally {
        await h.close();
        await db.cleanup();
        await place.cleanup();
      }
    },
    60_000,
  );
});
