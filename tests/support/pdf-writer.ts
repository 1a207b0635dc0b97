import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

// A minimal PDF writer for test fixtures: real PDFs (catalog, page tree, content streams, xref) that pdf.js
// parses, with text pages or image-only ("scanned") pages, and optionally encrypted with a user password (the
// standard security handler, revision 2: 40-bit RC4), as a password-protected PDF is.
export type PdfPage = { lines: string[] } | { image: { width: number; height: number; gray: Uint8Array } };

const escapePdfText = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);

export function writePdf(pages: PdfPage[], opts: { userPassword?: string } = {}): Uint8Array {
  const objects: (string | Buffer)[] = [];
  const add = (body: string | Buffer) => objects.push(body); // object number = index + 1
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add(''); // page tree, filled below
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const kids: number[] = [];
  for (const page of pages) {
    let content: string;
    let resources = '/Font << /F1 3 0 R >>';
    if ('lines' in page) {
      content = `BT /F1 11 Tf 14 TL 72 740 Td ${page.lines.map((l) => `(${escapePdfText(l)}) Tj T*`).join(' ')} ET`;
    } else {
      const { width, height, gray } = page.image;
      const data = deflateSync(gray);
      add(
        Buffer.concat([
          Buffer.from(
            `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length ${data.length} >>\nstream\n`,
          ),
          data,
          Buffer.from('\nendstream'),
        ]),
      );
      resources = `/XObject << /Im1 ${objects.length} 0 R >>`;
      content = `q 540 0 0 ${Math.round((540 * height) / width)} 36 200 cm /Im1 Do Q`;
    }
    add(`<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}\nendstream`);
    add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << ${resources} >> /Contents ${objects.length} 0 R >>`);
    kids.push(objects.length);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  const security = opts.userPassword === undefined ? undefined : standardSecurity(opts.userPassword);
  let trailerExtra = '';
  if (security) {
    objects.forEach((body, i) => {
      objects[i] = security.encryptStream(Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'), i + 1);
    });
    add(security.dictionary);
    trailerExtra = ` /Encrypt ${objects.length} 0 R /ID [<${security.id}> <${security.id}>]`;
  }

  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let length = parts[0]!.length;
  objects.forEach((body, i) => {
    offsets.push(length);
    const chunk = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`),
      Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'),
      Buffer.from('\nendobj\n'),
    ]);
    parts.push(chunk);
    length += chunk.length;
  });
  const xref = [
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`,
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`),
  ].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${trailerExtra} >>\nstartxref\n${length}\n%%EOF\n`));
  return new Uint8Array(Buffer.concat(parts));
}

const PASSWORD_PAD = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');
const md5 = (...parts: Buffer[]) => createHash('md5').update(Buffer.concat(parts)).digest();
const padded = (password: string) => Buffer.concat([Buffer.from(password, 'latin1'), PASSWORD_PAD]).subarray(0, 32);

function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 255]!;
  }
  return out;
}

/** The standard security handler, revision 2, for a user password (the owner password made from it). */
function standardSecurity(userPassword: string) {
  const id = md5(Buffer.from(`svc test ${userPassword}`));
  const permissions = -4;
  const owner = rc4(md5(padded(`${userPassword} owner`)).subarray(0, 5), padded(userPassword));
  const p = Buffer.alloc(4);
  p.writeInt32LE(permissions);
  const key = md5(padded(userPassword), owner, p, id).subarray(0, 5);
  const user = rc4(key, PASSWORD_PAD);
  const objectKey = (n: number) => md5(key, Buffer.from([n & 255, (n >> 8) & 255, (n >> 16) & 255, 0, 0])).subarray(0, 10);
  return {
    id: id.toString('hex'),
    dictionary: `<< /Filter /Standard /V 1 /R 2 /O <${owner.toString('hex')}> /U <${user.toString('hex')}> /P ${permissions} >>`,
    /** An object with its stream's data encrypted (the fixtures' objects hold no strings outside streams). */
    encryptStream(body: Buffer, n: number): Buffer {
      const start = body.indexOf('stream\n');
      const end = body.lastIndexOf('\nendstream');
      if (start < 0 || end < 0) return body;
      const from = start + 'stream\n'.length;
      return Buffer.concat([body.subarray(0, from), rc4(objectKey(n), body.subarray(from, end)), body.subarray(end)]);
    },
  };
}
