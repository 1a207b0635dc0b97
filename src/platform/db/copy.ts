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

/** readCopyRows, handing the rows over a piece at a time (CopyTuples): no object made per row or field. */
export async function readCopyTuples(
  db: Pick<Database, 'copyOut'>,
  select: string,
  onTuples: (tuples: CopyTuples) => void,
  options?: CopyOutOptions,
): Promise<number> {
  const decoder = createCopyTupleDecoder(onTuples);
  await db.copyOut(select, decoder.feed, options);
  return decoder.finish();
}

/**
 * Whole tuples of a piece of COPY output, each of `fields` fields: field f of tuple t is bytes[at[i], at[i] + length[i])
 * with i = t * fields + f, and NULL where length[i] is -1. Valid only during the call that hands them over.
 */
export type CopyTuples = {
  readonly bytes: Uint8Array;
  readonly count: number;
  readonly fields: number;
  readonly at: Int32Array;
  readonly length: Int32Array;
};

/**
 * Decodes binary COPY output fed in pieces of any size, calling `onRow` with each row's fields (null for NULL) in
 * order. The fields are views into a buffer that is reused: copy what must outlive the call. `finish()` answers the
 * row count, and throws when the output ended before its trailer (a cut connection); `feed` throws when the output
 * is not binary COPY.
 */
export function createCopyDecoder(onRow: (fields: readonly (Uint8Array | null)[]) => void) {
  const fields: (Uint8Array | null)[] = [];
  return createCopyTupleDecoder(({ bytes, count, fields: width, at, length }) => {
    for (let t = 0, i = 0; t < count; t++) {
      fields.length = 0;
      for (let f = 0; f < width; f++, i++) fields.push(length[i] === -1 ? null : bytes.subarray(at[i]!, at[i]! + length[i]!));
      onRow(fields);
    }
  });
}

/** createCopyDecoder, handing the whole tuples of each piece over at once (CopyTuples). */
export function createCopyTupleDecoder(onTuples: (tuples: CopyTuples) => void) {
  let pending: Uint8Array = EMPTY;
  let header = false;
  let ended = false;
  let rows = 0;
  let at = new Int32Array(1024);
  let length = new Int32Array(1024);

  /**
   * Reads the header, if not read yet, and the whole tuples of `buf` from `from`, handed over in blocks of one field
   * count: where the first tuple not whole begins.
   */
  function decode(buf: Uint8Array, from: number): number {
    let next = from;
    if (!header) {
      if (buf.length >= SIGNATURE.length && SIGNATURE.some((byte, i) => buf[i] !== byte))
        throw new Error('not binary COPY output (bad signature)');
      const extension = buf.length >= HEADER ? int32(buf, SIGNATURE.length + 4) : 0;
      if (buf.length < HEADER + extension) return 0;
      next = HEADER + extension;
      header = true;
    }
    let count = 0; // tuples in the block
    let width = -1; // their fields
    let used = 0; // entries of at and length
    const hand = () => {
      if (count > 0) onTuples({ bytes: buf, count, fields: width, at, length });
      rows += count;
      count = 0;
      used = 0;
    };
    // whole tuples only; a tuple cut by the piece's end waits for the next piece
    for (;;) {
      if (buf.length - next < 2) break;
      const fields = int16(buf, next);
      if (fields === -1) {
        ended = true;
        next += 2;
        break;
      }
      if (fields !== width) {
        hand();
        width = fields;
      }
      if (used + fields > at.length) {
        const grow = (old: Int32Array) => {
          const fresh = new Int32Array(Math.max(2 * old.length, used + fields));
          fresh.set(old.subarray(0, used));
          return fresh;
        };
        at = grow(at);
        length = grow(length);
      }
      let p = next + 2;
      let f = 0;
      for (; f < fields; f++) {
        if (buf.length - p < 4) break;
        const n = int32(buf, p);
        p += 4;
        at[used + f] = p;
        length[used + f] = n;
        if (n === -1) continue;
        if (buf.length - p < n) break;
        p += n;
      }
      if (f < fields) break;
      used += fields;
      count += 1;
      next = p;
    }
    hand();
    return next;
  }

  function feed(chunk: Uint8Array): void {
    if (ended) {
      if (chunk.length > 0) throw new Error('binary COPY output continues after its trailer');
      return;
    }
    // a plain view: a Node Buffer's subarray() costs several times more
    let buf = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (pending.length > 0) {
      // a whole tuple, or the header, ends past the pending bytes (they held none); the cut tuple finished from as
      // few of the piece's bytes as it takes, not the piece joined whole to it (a piece holds many rows when the
      // socket's reads are taken whole: postgres.ts)
      for (let take = Math.min(buf.length, pending.length + 1024); ; take = Math.min(buf.length, 2 * take)) {
        const head = joined([pending, buf.subarray(0, take)]);
        const next = decode(head, 0);
        if (ended || next > pending.length) {
          if (ended && next < head.length) throw new Error('binary COPY output continues after its trailer');
          buf = buf.subarray(next - pending.length);
          pending = EMPTY;
          break;
        }
        if (take === buf.length) {
          pending = head.slice(next);
          return;
        }
      }
      if (ended) {
        if (buf.length > 0) throw new Error('binary COPY output continues after its trailer');
        return;
      }
    }
    const next = decode(buf, 0);
    if (ended && next < buf.length) throw new Error('binary COPY output continues after its trailer');
    pending = next < buf.length ? buf.slice(next) : EMPTY; // no allocation when the piece ends whole
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
export const copyInt8 = (field: Uint8Array): number => copyInt8At(field, 0);
/** An int8 field's value read where it lies in a piece (CopyTuples' bytes at its `at`). */
export const copyInt8At = (bytes: Uint8Array, at: number): number => int32(bytes, at) * 2 ** 32 + (int32(bytes, at + 4) >>> 0);
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
