import { gunzipSync, gzipSync } from 'node:zlib';

// The little of tar that an OPA bundle needs: regular files in a gzip'd archive. OPA writes its members with a
// leading '/' (`/policy.wasm`) and Go's archive/tar uses PAX records for long names; both are read here. Written
// archives are reproducible: sorted members, mtime 0, mode 0644. Every size is bounded before anything is inflated.

export type Files = Map<string, Uint8Array>;

export class TarError extends Error {
  override name = 'TarError';
}

const BLOCK = 512;

/** The files of a `.tar.gz`; `maxBytes` bounds the inflated archive (a bundle that claims more is refused). */
export function readTarGz(archive: Uint8Array, maxBytes: number): Files {
  let tar: Buffer;
  try {
    tar = gunzipSync(archive, { maxOutputLength: maxBytes });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw new TarError(`the archive inflates to more than ${maxBytes} bytes`);
    throw new TarError(`the archive is not gzip: ${(err as Error).message}`);
  }
  const files: Files = new Map();
  let pending: string | undefined; // a PAX or GNU long name for the next member
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break;
    if (!checksumHolds(header)) throw new TarError(`member header at byte ${at} has a wrong checksum`);
    const size = octal(header.subarray(124, 136));
    const type = String.fromCharCode(header[156]!);
    const body = tar.subarray(at + BLOCK, at + BLOCK + size);
    if (body.length !== size) throw new TarError('the archive ends inside a member');
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') pending = paxPath(body) ?? pending;
    else if (type === 'L') pending = cString(body);
    else if (type === '0' || type === '\0') {
      const prefix = cString(header.subarray(345, 500));
      const raw = pending ?? (prefix ? `${prefix}/${cString(header.subarray(0, 100))}` : cString(header.subarray(0, 100)));
      pending = undefined;
      const name = memberName(raw);
      if (files.has(name)) throw new TarError(`the archive holds ${name} twice`);
      files.set(name, new Uint8Array(body));
    } else pending = undefined; // folders, links and global headers carry nothing a bundle uses
  }
  return files;
}

/** A reproducible `.tar.gz` of the files, in name order. */
export function writeTarGz(files: Files): Uint8Array {
  const blocks: Buffer[] = [];
  for (const name of [...files.keys()].sort()) {
    const body = files.get(name)!;
    blocks.push(header(memberName(name), body.length), Buffer.from(body), Buffer.alloc((BLOCK - (body.length % BLOCK)) % BLOCK));
  }
  blocks.push(Buffer.alloc(BLOCK * 2));
  return new Uint8Array(gzipSync(Buffer.concat(blocks), { level: 9 }));
}

/** Members are relative paths: a leading '/' or './' is dropped, and nothing may climb out of the bundle. */
function memberName(raw: string): string {
  const name = raw.replace(/^(\.?\/)+/, '');
  if (name === '' || name.split('/').some((s) => s === '..' || s === ''))
    throw new TarError(`member name ${JSON.stringify(raw)} is not a relative path`);
  return name;
}

function header(name: string, size: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  let base = name;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', 155);
    if (cut <= 0 || Buffer.byteLength(name.slice(cut + 1)) > 100) throw new TarError(`member name ${name} is too long`);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  h.write(base, 0, 100, 'utf8');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148);
  h.write('0', 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

function checksumHolds(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
  return sum === octal(h.subarray(148, 156));
}

function octal(field: Buffer): number {
  // Sizes above 8 GiB use base-256 (high bit set): no bundle member is that large.
  if (field[0]! & 0x80) throw new TarError('a member is larger than a bundle may be');
  const text = cString(field).trim();
  const n = text === '' ? 0 : parseInt(text, 8);
  if (!Number.isSafeInteger(n) || n < 0) throw new TarError(`a member header holds a bad number ${JSON.stringify(text)}`);
  return n;
}

const cString = (b: Uint8Array): string => {
  const end = b.indexOf(0);
  return Buffer.from(end < 0 ? b : b.subarray(0, end)).toString('utf8');
};

/** PAX records are `<length> key=value\n`; only `path` matters here. */
function paxPath(body: Buffer): string | undefined {
  let path: string | undefined;
  for (let at = 0; at < body.length; ) {
    const space = body.indexOf(0x20, at);
    const length = Number(body.subarray(at, space).toString());
    if (space < 0 || !Number.isInteger(length) || length <= 0) throw new TarError('a PAX header is malformed');
    const record = body.subarray(space + 1, at + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (record.slice(0, eq) === 'path') path = record.slice(eq + 1);
    at += length;
  }
  return path;
}
