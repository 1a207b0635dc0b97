// Unpacks a tarball that PGlite wrote (dumpDataDir: ustar, files and folders only) into a folder, a piece at a
// time: read whole, a 70 MB cluster stayed in memory as garbage until a collection that an idle worker never runs.
// Anything else in it (a link, a name that leaves the folder) is refused, and the caller starts the cluster anew.
import { mkdir, open } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';

const BLOCK = 512;
const PIECE = 1 << 20;

export async function untarInto(file, folder) {
  const tar = await open(file, 'r');
  try {
    const header = Buffer.alloc(BLOCK);
    const piece = Buffer.alloc(PIECE);
    for (let at = 0; ; ) {
      if ((await tar.read(header, 0, BLOCK, at)).bytesRead < BLOCK) throw new Error('the tarball ends inside a header');
      at += BLOCK;
      if (header.every((b) => b === 0)) return;
      const text = (from, to) => header.toString('utf8', from, to).replace(/\0.*$/s, '');
      const prefix = text(345, 500);
      const name = normalize((prefix ? `${prefix}/` : '') + text(0, 100)).replace(/^[/\\]+/, '');
      if (name === '' || name === '.' || name.split(sep).includes('..')) throw new Error(`refused name in the tarball: ${name}`);
      const size = Number.parseInt(text(124, 136).trim() || '0', 8);
      const type = String.fromCharCode(header[156] || 48);
      const target = join(folder, name);
      if (type === '5') await mkdir(target, { recursive: true });
      else if (type === '0') {
        await mkdir(dirname(target), { recursive: true });
        const out = await open(target, 'w', 0o600);
        try {
          for (let left = size; left > 0; ) {
            const { bytesRead } = await tar.read(piece, 0, Math.min(PIECE, left), at + size - left);
            if (bytesRead === 0) throw new Error('the tarball ends inside a file');
            await out.write(piece, 0, bytesRead);
            left -= bytesRead;
          }
        } finally {
          await out.close();
        }
      } else throw new Error(`unexpected entry type ${type} in the tarball`);
      at += Math.ceil(size / BLOCK) * BLOCK;
    }
  } finally {
    await tar.close();
  }
}
