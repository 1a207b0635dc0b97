import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createFolderStore, openArtifactRoot, parseArtifactRoot } from '../../src/platform/objects/index.ts';
import { expectCode, MiB, objectStoreContract, readAll, text } from '../support/objects-contract.ts';

const made: string[] = [];
async function freshRoot(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-objects-'));
  made.push(dir);
  return join(dir, 'store');
}
afterAll(async () => {
  await Promise.all(made.map((d) => rm(d, { recursive: true, force: true })));
});

objectStoreContract('folder', async () => createFolderStore(await freshRoot()));

describe('folder store', () => {
  it('describes itself by its absolute folder', async () => {
    const root = await freshRoot();
    expect(createFolderStore(root).describe()).toBe(`folder:${root}`);
  });

  it('keeps every key inside its root', async () => {
    const root = await freshRoot();
    const store = createFolderStore(root);
    await expectCode(store.put('../escape.txt', Buffer.from('x')), 'INVALID_KEY');
    await expectCode(store.put('a/../../escape.txt', Buffer.from('x')), 'INVALID_KEY');
    await expectCode(store.delete('../'), 'INVALID_KEY');
    expect(existsSync(join(root, '..', 'escape.txt'))).toBe(false);
  });

  it('does not follow a symlink planted inside the root', async () => {
    const root = await freshRoot();
    const store = createFolderStore(root);
    await store.put('seed.txt', Buffer.from('s'));
    const outside = join(root, '..', 'secret.txt');
    await writeFile(outside, 'secret');
    await symlink(outside, join(root, 'link.txt'));
    await expectCode(store.get('link.txt'), 'INVALID_KEY');
    expect((await store.list('')).map((e) => e.key)).toEqual(['seed.txt']);
    // a tree listing names the link as a link, and does not descend into a linked folder
    await symlink(join(root, '..'), join(root, 'up'));
    expect((await store.listTree('')).map((e) => [e.key, Boolean(e.link)])).toEqual([
      ['link.txt', true],
      ['seed.txt', false],
      ['up', true],
    ]);
  });

  it('streams an upload to disk as it arrives instead of holding it in memory', async () => {
    const root = await freshRoot();
    const store = createFolderStore(root);
    const total = 64 * MiB;
    const tmp = join(root, '.svc-tmp');
    // Each time the uploader asks for more, compare what has been produced with what is already on disk.
    let produced = 0;
    let maxLag = 0;
    const body = new Readable({
      async read() {
        const names = await readdir(tmp).catch(() => []);
        const onDisk = names[0] ? (statSync(join(tmp, names[0]), { throwIfNoEntry: false })?.size ?? 0) : 0;
        maxLag = Math.max(maxLag, produced - onDisk);
        if (produced >= total) return void this.push(null);
        produced += MiB;
        this.push(Buffer.alloc(MiB, produced / MiB));
      },
    });
    expect(await store.put('big.bin', body)).toEqual({ size: total });
    expect(produced).toBe(total);
    expect(maxLag).toBeLessThan(8 * MiB);
    const got = await store.get('big.bin');
    let n = 0;
    let ok = true;
    for await (const c of got!.body) {
      for (let i = 0; i < (c as Buffer).length; i += 4096) ok &&= (c as Buffer)[i] === (Math.floor((n + i) / MiB) + 1) % 256;
      n += (c as Buffer).length;
    }
    expect([n, ok]).toEqual([total, true]);
  });

  it('hides its upload folder and reserves its name', async () => {
    const root = await freshRoot();
    const store = createFolderStore(root);
    await store.put('a.txt', Buffer.from('a'));
    expect(existsSync(join(root, '.svc-tmp'))).toBe(true);
    expect(await store.list('')).toEqual([{ key: 'a.txt', size: 1 }]);
    await expectCode(store.put('.svc-tmp/x', Buffer.from('x')), 'INVALID_KEY');
  });

  it('rejects a body shorter than its declared length, keeping nothing', async () => {
    const store = createFolderStore(await freshRoot());
    await expectCode(store.put('short.txt', Readable.from([Buffer.from('abc')]), { contentLength: 10 }), 'FAILED');
    expect(await store.get('short.txt')).toBeNull();
  });

  it('refuses a key that would need an object to be a folder, or a folder to be an object', async () => {
    const store = createFolderStore(await freshRoot());
    await store.put('a', Buffer.from('file'));
    await expectCode(store.put('a/b', Buffer.from('x')), 'INVALID_KEY');
    await store.put('d/e', Buffer.from('x'));
    await expectCode(store.put('d', Buffer.from('x')), 'INVALID_KEY');
    expect(await text(store, 'a')).toBe('file');
  });

  it('lists nothing for a root that does not exist yet', async () => {
    const store = createFolderStore(await freshRoot());
    expect(await store.list('')).toEqual([]);
    expect(await store.get('x')).toBeNull();
  });

  it('makes its root again when the folder was removed while the store was in use', async () => {
    const root = await freshRoot();
    const store = createFolderStore(root);
    await store.put('a/b.txt', Buffer.from('first'));
    await rm(root, { recursive: true });
    expect(await store.get('a/b.txt')).toBeNull();
    expect(await store.list('')).toEqual([]);
    await store.put('a/b.txt', Buffer.from('again'));
    expect(await text(store, 'a/b.txt')).toBe('again');
  });
});

describe('folder store and symbolic links on the way to a key', () => {
  // A root holding a real folder `a`, a link `linked` to a folder outside the root, a link `a/deep` to the same
  // folder and a link `file.txt` to a file outside; the outside folder holds secret.txt.
  async function planted() {
    const root = await freshRoot();
    const outside = await mkdtemp(join(tmpdir(), 'svc-objects-outside-'));
    made.push(outside);
    const store = createFolderStore(root);
    await store.put('a/real.txt', Buffer.from('inside'));
    await writeFile(join(outside, 'secret.txt'), 'top secret');
    await symlink(outside, join(root, 'linked'));
    await symlink(outside, join(root, 'a', 'deep'));
    await symlink(join(outside, 'secret.txt'), join(root, 'file.txt'));
    const untouched = async () => {
      expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
      expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
    };
    return { root, outside, store, untouched };
  }

  it.each(['linked/secret.txt', 'a/deep/secret.txt', 'file.txt'])('cannot read %s, even its size', async (key) => {
    const { store } = await planted();
    const err = await expectCode(store.get(key), 'INVALID_KEY');
    expect(err.message).toContain(JSON.stringify(key));
    expect(err.message).toMatch(/symbolic link/);
    await expectCode(store.head(key), 'INVALID_KEY');
  });

  it.each(['linked/new.txt', 'linked/sub/new.txt', 'a/deep/new.txt', 'linked/secret.txt', 'file.txt'])(
    'cannot write %s, and nothing lands outside',
    async (key) => {
      const { store, untouched } = await planted();
      await expectCode(store.put(key, Buffer.from('written through a link')), 'INVALID_KEY');
      await expectCode(store.put(key, Readable.from([Buffer.from('streamed through a link')])), 'INVALID_KEY');
      await untouched();
    },
  );

  it.each(['linked', 'a/deep', 'linked/'])('cannot list %s', async (prefix) => {
    const { store } = await planted();
    await expectCode(store.list(prefix), 'INVALID_KEY');
    await expectCode(store.listTree(prefix), 'INVALID_KEY');
  });

  it.each(['linked/secret.txt', 'a/deep/secret.txt', 'file.txt', 'linked/', 'a/deep/', 'linked', 'a/deep'])(
    'cannot delete %s, and the file outside stays',
    async (key) => {
      const { store, untouched } = await planted();
      await expectCode(store.delete(key), 'INVALID_KEY');
      await untouched();
    },
  );

  it('still reads, writes, lists and deletes nested keys, also under a root reached through a link', async () => {
    const { root, store } = await planted();
    // the operator's root may itself be a link (a data folder moved elsewhere): it is followed once, at the top
    const alias = `${root}-alias`;
    await symlink(root, alias);
    for (const s of [store, createFolderStore(alias)]) {
      await s.put('x/y/z.txt', Buffer.from('nested'));
      expect(await text(s, 'x/y/z.txt')).toBe('nested');
      expect(await s.head('x/y/z.txt')).toMatchObject({ size: 6 });
      expect(await s.list('x/y')).toEqual([{ key: 'x/y/z.txt', size: 6 }]);
      expect((await s.listTree('x')).map((e) => e.key)).toEqual(['x/y/z.txt']);
      expect((await s.listTree('a')).map((e) => [e.key, Boolean(e.link)])).toEqual([
        ['a/deep', true],
        ['a/real.txt', false],
      ]);
      await s.delete('x/y/z.txt');
      expect(await s.get('x/y/z.txt')).toBeNull();
      expect(existsSync(join(root, 'x'))).toBe(false);
    }
  });

  it('hands out a reader that keeps the file it opened when the file is removed before it is read', async () => {
    const { root, store } = await planted();
    const got = await store.get('a/real.txt');
    await rm(join(root, 'a', 'real.txt'));
    await new Promise((r) => setTimeout(r, 20));
    expect((await readAll(got!.body)).toString()).toBe('inside');
  });
});

describe('parseArtifactRoot', () => {
  it.each([
    ['s3://mlflow/artifacts/', { kind: 's3', bucket: 'mlflow', prefix: 'artifacts/' }],
    ['s3://mlflow/a/b', { kind: 's3', bucket: 'mlflow', prefix: 'a/b/' }],
    ['s3://mlflow', { kind: 's3', bucket: 'mlflow', prefix: '' }],
    ['s3://mlflow/', { kind: 's3', bucket: 'mlflow', prefix: '' }],
    ['file:///var/lib/svc/artifacts', { kind: 'folder', path: '/var/lib/svc/artifacts' }],
    ['/var/lib/svc/artifacts', { kind: 'folder', path: '/var/lib/svc/artifacts' }],
    ['data/artifacts', { kind: 'folder', path: join(process.cwd(), 'data/artifacts') }],
  ])('parses %s', (uri, expected) => {
    expect(parseArtifactRoot(uri)).toEqual(expected);
  });

  it.each(['gs://bucket/x', 'http://host/x', 's3://Bad_Bucket/x', 's3://ok-bucket/../x', ''])('refuses %j', async (uri) => {
    await expectCode(
      Promise.resolve().then(() => parseArtifactRoot(uri)),
      'INVALID_KEY',
    );
  });

  it('opens the store a root names', async () => {
    const root = await freshRoot();
    expect(openArtifactRoot(`file://${root}`).describe()).toBe(`folder:${root}`);
    expect(openArtifactRoot('s3://bucket/runs/', { endpoint: 'http://127.0.0.1:1' }).describe()).toBe('s3://bucket/runs/');
  });
});
