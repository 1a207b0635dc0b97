import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createFolderStore, openArtifactRoot, parseArtifactRoot } from '../../src/platform/objects/index.ts';
import { expectCode, MiB, objectStoreContract, text } from '../support/objects-contract.ts';

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
    expect(await store.get('link.txt')).toBeNull();
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
