// The object store contract, written once and run against every adapter (folder in the unit suite, S3 against a
// real MinIO in the integration suite). `makeStore` is called once per test and must return an empty store.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ObjectStoreError, type ObjectStore } from '../../src/platform/objects/index.ts';

export const MiB = 1024 * 1024;

export async function readAll(body: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return Buffer.concat(chunks);
}

export async function text(store: ObjectStore, key: string): Promise<string | null> {
  const got = await store.get(key);
  return got ? (await readAll(got.body)).toString('utf8') : null;
}

// `total` bytes of a repeatable pattern produced lazily, `chunk` at a time, plus the sha256 it should hash to.
export function generated(total: number, chunk = 256 * 1024): { stream: Readable; sha256: string } {
  const block = Buffer.alloc(chunk);
  for (let i = 0; i < chunk; i++) block[i] = (i * 31 + 7) & 0xff;
  const hash = createHash('sha256');
  for (let left = total; left > 0; left -= chunk) hash.update(block.subarray(0, Math.min(chunk, left)));
  let sent = 0;
  const stream = new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const n = Math.min(chunk, total - sent);
      sent += n;
      this.push(Buffer.from(block.subarray(0, n)));
    },
  });
  return { stream, sha256: hash.digest('hex') };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export async function expectCode(p: Promise<unknown>, code: ObjectStoreError['code']): Promise<ObjectStoreError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ObjectStoreError);
  expect((err as ObjectStoreError).code).toBe(code);
  return err as ObjectStoreError;
}

export const BAD_KEYS = ['', '../x', 'a/../../x', '..', '/etc/passwd', 'a\\b', 'a\0b', 'a//b', './a', 'a/.', 'a/'];

export function objectStoreContract(name: string, makeStore: () => Promise<ObjectStore>): void {
  describe(`object store contract: ${name}`, () => {
    it('puts bytes and gets them back with their size', async () => {
      const store = await makeStore();
      expect(await store.put('notes/hello.txt', Buffer.from('hello world'), { contentType: 'text/plain' })).toEqual({ size: 11 });
      const got = await store.get('notes/hello.txt');
      expect(got?.size).toBe(11);
      expect((await readAll(got!.body)).toString()).toBe('hello world');
      expect(store.describe()).toMatch(/^(folder:|s3:\/\/)/);
    });

    it('heads an object: its size, and an entity tag that changes when the object is replaced', async () => {
      const store = await makeStore();
      expect(await store.head('bundle.tar.gz')).toBeNull();
      await store.put('bundle.tar.gz', Buffer.from('first'));
      const first = await store.head('bundle.tar.gz');
      expect(first).toEqual({ size: 5, etag: expect.stringMatching(/.+/) });
      expect(await store.head('bundle.tar.gz')).toEqual(first);
      await new Promise((r) => setTimeout(r, 5));
      await store.put('bundle.tar.gz', Buffer.from('second'));
      const second = await store.head('bundle.tar.gz');
      expect(second?.size).toBe(6);
      expect(second?.etag).not.toBe(first?.etag);
      await store.put('dir/file.txt', Buffer.from('x'));
      expect(await store.head('dir')).toBeNull();
    });

    it('answers null for a missing object, and for a folder name', async () => {
      const store = await makeStore();
      expect(await store.get('missing.bin')).toBeNull();
      await store.put('dir/file.txt', Buffer.from('x'));
      expect(await store.get('dir')).toBeNull();
    });

    it('replaces an existing object', async () => {
      const store = await makeStore();
      await store.put('k.txt', Buffer.from('first version'));
      await store.put('k.txt', Buffer.from('second'));
      expect(await text(store, 'k.txt')).toBe('second');
      expect((await store.list('')).map((e) => [e.key, e.size])).toEqual([['k.txt', 6]]);
    });

    it('stores empty objects and unicode keys', async () => {
      const store = await makeStore();
      expect(await store.put('données/été.txt', new Uint8Array(0))).toEqual({ size: 0 });
      expect(await store.get('données/été.txt')).toMatchObject({ size: 0 });
      expect(await store.list('données')).toEqual([{ key: 'données/été.txt', size: 0 }]);
    });

    it('puts Node streams, web streams and streams of known length', async () => {
      const store = await makeStore();
      expect(await store.put('node.txt', Readable.from([Buffer.from('ab'), Buffer.from('cd')]))).toEqual({ size: 4 });
      const web = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode('web '));
          c.enqueue(new TextEncoder().encode('stream'));
          c.close();
        },
      });
      expect(await store.put('web.txt', web)).toEqual({ size: 10 });
      expect(await store.put('known.txt', Readable.from([Buffer.from('12345')]), { contentLength: 5 })).toEqual({ size: 5 });
      expect(await text(store, 'node.txt')).toBe('abcd');
      expect(await text(store, 'web.txt')).toBe('web stream');
      expect(await text(store, 'known.txt')).toBe('12345');
    });

    it.each([
      ['unknown length, several parts', 20 * MiB + 123, false],
      ['unknown length, exactly one part', 8 * MiB, false],
      ['known length', 12 * MiB, true],
    ])('streams a large generated body in: %s', async (_label, total, known) => {
      const store = await makeStore();
      const { stream, sha256: expected } = generated(total);
      const res = await store.put('big/blob.bin', stream, known ? { contentLength: total } : {});
      expect(res.size).toBe(total);
      const got = await store.get('big/blob.bin');
      expect(got?.size).toBe(total);
      expect(sha256(await readAll(got!.body))).toBe(expected);
    });

    it('lists direct children like ls, folders marked, sorted', async () => {
      const store = await makeStore();
      for (const k of ['a.txt', 'dir/b.txt', 'dir/sub/c.txt', 'dir/sub/deeper/d.txt', 'dirx.txt']) await store.put(k, Buffer.from(k));
      expect(await store.list('')).toEqual([
        { key: 'a.txt', size: 5 },
        { key: 'dir', size: 0, isDir: true },
        { key: 'dirx.txt', size: 8 },
      ]);
      const dir = [
        { key: 'dir/b.txt', size: 9 },
        { key: 'dir/sub', size: 0, isDir: true },
      ];
      expect(await store.list('dir')).toEqual(dir);
      expect(await store.list('dir/')).toEqual(dir);
      expect(await store.list('dir/sub')).toEqual([
        { key: 'dir/sub/c.txt', size: 13 },
        { key: 'dir/sub/deeper', size: 0, isDir: true },
      ]);
      expect(await store.list('nothing-here')).toEqual([]);
      expect(await store.list('a.txt')).toEqual([]);
      expect(await store.list('di')).toEqual([]);
    });

    it('lists every object under a folder at any depth, with a version that moves when the object is replaced', async () => {
      const store = await makeStore();
      for (const k of ['a.txt', 'dir/b.txt', 'dir/sub/c.txt', 'dirx.txt']) await store.put(k, Buffer.from(k));
      const all = await store.listTree('');
      expect(all.map((e) => [e.key, e.size])).toEqual([
        ['a.txt', 5],
        ['dir/b.txt', 9],
        ['dir/sub/c.txt', 13],
        ['dirx.txt', 8],
      ]);
      expect((await store.listTree('dir')).map((e) => e.key)).toEqual(['dir/b.txt', 'dir/sub/c.txt']);
      expect(await store.listTree('nothing-here')).toEqual([]);
      const before = all.find((e) => e.key === 'dir/b.txt')!.version;
      expect(before).not.toBe('');
      await store.put('dir/b.txt', Buffer.from('dir/b.TXT'));
      const after = (await store.listTree('dir')).find((e) => e.key === 'dir/b.txt')!.version;
      expect(after).not.toBe(before);
      expect((await store.listTree('')).find((e) => e.key === 'a.txt')!.version).toBe(all[0]!.version);
    });

    it('deletes one key, leaving no empty folder behind', async () => {
      const store = await makeStore();
      await store.put('keep.txt', Buffer.from('k'));
      await store.put('only/child.txt', Buffer.from('c'));
      await store.delete('only/child.txt');
      expect(await store.get('only/child.txt')).toBeNull();
      expect(await store.list('')).toEqual([{ key: 'keep.txt', size: 1 }]);
      await store.delete('only/child.txt'); // missing: not an error
      await store.delete('never-was.txt');
    });

    it('deletes everything under a folder prefix, and nothing that merely shares its spelling', async () => {
      const store = await makeStore();
      for (const k of ['run/a.txt', 'run/m/model.pkl', 'run/m/x/y.bin', 'runner.txt', 'other/run/z.txt'])
        await store.put(k, Buffer.from('v'));
      await store.delete('run/');
      expect(await store.list('run')).toEqual([]);
      expect(await store.get('run/m/model.pkl')).toBeNull();
      expect((await store.list('')).map((e) => e.key)).toEqual(['other', 'runner.txt']);
      expect(await text(store, 'other/run/z.txt')).toBe('v');
      await store.delete('run/'); // again: nothing to do
    });

    it('refuses to delete the whole store', async () => {
      const store = await makeStore();
      await store.put('x.txt', Buffer.from('x'));
      await expectCode(store.delete('/'), 'INVALID_KEY');
      expect(await text(store, 'x.txt')).toBe('x');
    });

    it.each(BAD_KEYS)('rejects the key %j everywhere with INVALID_KEY', async (key) => {
      const store = await makeStore();
      await expectCode(store.put(key, Buffer.from('x')), 'INVALID_KEY');
      await expectCode(store.get(key), 'INVALID_KEY');
      if (!key.endsWith('/')) await expectCode(store.delete(key), 'INVALID_KEY');
      expect(await store.list('')).toEqual([]);
    });

    it.each(['../', '/etc', 'a//b/', 'x/../..'])('rejects the list prefix %j', async (prefix) => {
      const store = await makeStore();
      await expectCode(store.list(prefix), 'INVALID_KEY');
    });

    it('leaves no object behind when the body stream fails', async () => {
      const store = await makeStore();
      let n = 0;
      const failing = new Readable({
        read() {
          if (++n > 40) return void this.destroy(new Error('client went away'));
          this.push(Buffer.alloc(256 * 1024, 1));
        },
      });
      await expect(store.put('broken.bin', failing)).rejects.toThrow();
      expect(await store.get('broken.bin')).toBeNull();
      expect(await store.list('')).toEqual([]);
    });
  });
}
