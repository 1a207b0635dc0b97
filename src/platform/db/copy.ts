import type { CopyOutOptions, Database } from './types.ts';

// PostgreSQL's binary COPY format (the "Binary Format" section of the COPY reference): an 11-byte signature, a flags
// word and a header extension, then one tuple per row (int16 field count, then per field an int32 length, -1 for
// NULL, and the value in the type's binary send form), and an int16 -1 as the trailer. All integers big-endian.

const SIGNATURE = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00];
const HEADER = SIGNATURE.length + 8;

const int16 = (b: Uint8Array, at: number) => ((b[at]! << 24) >> 16) | b[at + 1]!;
const int32 = (b: Uint8Array, at: number) => (b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!;

const EMPTY = new Uint8Array(0);

/** Reads the rows of `select` with binary COPY (Database.copyOut), calling `onRow` for each; resolves with the count. */
export async function readCopyRows(
  db: Pick<Database, 'copyOut'>,
  select: string,
  onRow: (fields: readonly (Uint8Array | null)[]) => void,
  options?: CopyOutOptions,
): Promise<number> {
  const decoder = createCopyDecoder(onRow);
  await db.copyOut(select, decoder.feed, options);
  return decoder.finish();
}

/**
 * Decodes binary COPY output fed in pieces of any size, calling `onRow` with each row's fields (null for NULL) in
 * order. The fields are views into a buffer that is reused: copy what must outlive the call. `finish()` answers the
 * row count, and throws when the output ended before its trailer (a cut connection); `feed` throws when the output
 * is not binary COPY.
 */
export function createCopyDecoder(onRow: (fields: readonly (Uint8Array | null)[]) => void) {
  let pending: Uint8Array = EMPTY;
  let header = false;
  let ended = false;
  let rows = 0;
  const fields: (Uint8Array | null)[] = [];

  function feed(chunk: Uint8Array): void {
    if (ended) {
      if (chunk.length > 0) throw new Error('binary COPY output continues after its trailer');
      return;
    }
    // a plain view: a Node Buffer's subarray() costs several times more, and there is one per field
    const buf = pending.length === 0 ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength) : joined([pending, chunk]);
    let at = 0;
    if (!header) {
      if (buf.length >= SIGNATURE.length && SIGNATURE.some((byte, i) => buf[i] !== byte))
        throw new Error('not binary COPY output (bad signature)');
      const extension = buf.length >= HEADER ? int32(buf, SIGNATURE.length + 4) : 0;
      if (buf.length < HEADER + extension) {
        pending = buf.slice();
        return;
      }
      at = HEADER + extension;
      header = true;
    }
    // whole tuples only; a tuple cut by the piece's end waits for the next piece
    for (;;) {
      if (buf.length - at < 2) break;
      const count = int16(buf, at);
      if (count === -1) {
        ended = true;
        at += 2;
        break;
      }
      let p = at + 2;
      fields.length = 0;
      for (let f = 0; f < count; f++) {
        if (buf.length - p < 4) break;
        const length = int32(buf, p);
        p += 4;
        if (length === -1) {
          fields.push(null);
          continue;
        }
        if (buf.length - p < length) break;
        fields.push(buf.subarray(p, p + length));
        p += length;
      }
      if (fields.length < count) break;
      onRow(fields);
      rows += 1;
      at = p;
    }
    if (ended && at < buf.length) throw new Error('binary COPY output continues after its trailer');
    pending = at < buf.length ? buf.slice(at) : EMPTY; // one piece a row: no allocation when it ends whole
  }

  return {
    feed,
    finish(): number {
      if (!ended) throw new Error('binary COPY output ended before its trailer: the connection was cut or the statement failed');
      return rows;
    },
  };
}

/** Big-endian integer fields of the binary form: int4 and int8 (as a number: exact below 2^53). */
export const copyInt4 = (field: Uint8Array): number => int32(field, 0);
export const copyInt8 = (field: Uint8Array): number => int32(field, 0) * 2 ** 32 + (int32(field, 4) >>> 0);
/** float8 */
export const copyFloat8 = (field: Uint8Array): number => new DataView(field.buffer, field.byteOffset, 8).getFloat64(0);

/** A field of binary COPY input: its bytes in the column type's receive form, or null for NULL. */
export type CopyField = Uint8Array | null;

/** Pieces of COPY input are gathered to about this size: one protocol message (and socket write) each. */
const PIECE_BYTES = 64 * 1024;
/** The signature, no flags, no header extension. */
const INPUT_HEADER = Uint8Array.of(...SIGNATURE, 0, 0, 0, 0, 0, 0, 0, 0);
const INPUT_TRAILER = Uint8Array.of(0xff, 0xff);

/**
 * Binary COPY input for Sql.copyIn, from rows of fields (the column list's order), as pieces of about 64 KiB made
 * as they are read: rows given by a generator are encoded as the database takes them, never all held at once.
 */
export function* copyInput(rows: Iterable<readonly CopyField[]>): Generator<Uint8Array> {
  let piece: Uint8Array[] = [INPUT_HEADER];
  let size = HEADER;
  for (const fields of rows) {
    let length = 2;
    for (const f of fields) length += 4 + (f?.length ?? 0);
    const row = new Uint8Array(length);
    const view = new DataView(row.buffer);
    view.setInt16(0, fields.length);
    let at = 2;
    for (const f of fields) {
      view.setInt32(at, f ? f.length : -1);
      at += 4;
      if (f) row.set(f, at);
      at += f?.length ?? 0;
    }
    piece.push(row);
    size += length;
    if (size >= PIECE_BYTES) {
      yield joined(piece);
      piece = [];
      size = 0;
    }
  }
  piece.push(INPUT_TRAILER);
  yield joined(piece);
}

/** The parts as one array (the part itself when there is one). */
/** The parts as one array (the part itself when there is one). */
export function joined(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((size, p) => size + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Receive forms of the common types, for copyInput's fields. */
export const int4Field = (n: number): Uint8Array => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, n);
  return b;
};
export const textField = (s: string): Uint8Array => Buffer.from(s, 'utf8');
export const uuidField = (id: string): Uint8Array => {
  const hex = id.replaceAll('-', '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new RangeError(`not a UUID: ${id}`);
  return Buffer.from(hex, 'hex');
};
