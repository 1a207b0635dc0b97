import { deflateSync } from 'node:zlib';

// A minimal PDF writer for test fixtures: real PDFs (catalog, page tree, content streams, xref) that pdf.js
// parses, with text pages or image-only ("scanned") pages.
export type PdfPage = { lines: string[] } | { image: { width: number; height: number; gray: Uint8Array } };

const escapePdfText = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);

export function writePdf(pages: PdfPage[]): Uint8Array {
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
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`));
  return new Uint8Array(Buffer.concat(parts));
}
