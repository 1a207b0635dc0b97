import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

// A copy's stored vectors and chunk ids in a local file, by sequence number, so that a question never asked before
// reads its candidates' vectors from the file (the OS's page cache, a few microseconds a row) instead of from
// Postgres (an index, heap and two TOAST pages a row, 1.5 ms for the 13 rows of a clustered question at 100 000
// rows, the largest part of a new question's time). Written once, in sequence order, by the read that fills the
// clusters' finer code (indexes.ts), and only then: its rows are those the finer code holds, bounded by the same
// budget. A chunk's vector never changes (a replaced chunk gets a new sequence number) and the copy asks only for rows
// it holds, so a row read here is the one the database held at the copy's version, as with the kept float rows.
// The file is unlinked as soon as it is opened: the OS frees it when the copy closes it, or when the process ends.
// Its bytes are 16 + 4·dim a row (3088 at 768 dimensions), in the OS's page cache and not in the process's resident
// set; only copies with a finer code have one, so the budget bounds them too (about 7.6 times the code's bytes).

const UUID_BYTES = 16;
/** Rows written at once (about 790 KB at 768 dimensions). */
const WRITE_ROWS = 256;

export type VectorSpill = {
  /** Rows that can be read back (those appended and written). */
  readonly rows: number;
  /** Appends a row; sequence numbers must ascend. `id` is the chunk's uuid as 16 bytes. Throws when the file cannot grow. */
  append(seq: number, id: Uint8Array, vector: Float32Array): void;
  /** Writes what append() holds back. */
  flush(): void;
  /** The chunk id and the stored vector of row `seq`; undefined when the file does not hold it. */
  read(seq: number): { id: string; vector: Float32Array } | undefined;
  /** Gives the file back (idempotent). */
  close(): void;
};

/** An empty spill of at most `capacity` rows of `dim` components; undefined where no temporary file can be made. */
export function createVectorSpill(dim: number, capacity: number, dir = tmpdir()): VectorSpill | undefined {
  let fd: number | undefined;
  const path = join(dir, `svc-vectors-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    fd = openSync(path, 'wx+', 0o600);
    unlinkSync(path);
  } catch {
    // no file, or one that cannot be unlinked while open (Windows): none is kept
    if (fd !== undefined) {
      closeSync(fd);
      try {
        unlinkSync(path);
      } catch {}
    }
    return undefined;
  }
  const rowBytes = UUID_BYTES + 4 * dim;
  const seqs = new Float64Array(capacity);
  const pending = Buffer.alloc(WRITE_ROWS * rowBytes);
  const row = Buffer.alloc(rowBytes);
  let appended = 0;
  let written = 0;
  const flush = () => {
    if (fd === undefined || appended === written) return;
    const bytes = (appended - written) * rowBytes;
    for (let done = 0; done < bytes; ) done += writeSync(fd, pending, done, bytes - done, written * rowBytes + done);
    written = appended;
  };
  return {
    get rows() {
      return written;
    },
    append(seq, id, vector) {
      if (fd === undefined) throw new Error('the vector spill is closed');
      if (appended >= capacity) throw new RangeError(`the vector spill holds ${capacity} rows`);
      if (appended > 0 && seq <= seqs[appended - 1]!) throw new RangeError(`rows must come in ascending sequence order: ${seq}`);
      if (id.length !== UUID_BYTES || vector.length !== dim)
        throw new RangeError('a spilled row needs a 16-byte id and the copy’s dimensions');
      const at = (appended - written) * rowBytes;
      pending.set(id, at);
      Buffer.from(vector.buffer, vector.byteOffset, 4 * dim).copy(pending, at + UUID_BYTES);
      seqs[appended++] = seq;
      if (appended - written === WRITE_ROWS) flush();
    },
    flush,
    read(seq) {
      if (fd === undefined) return undefined;
      let lo = 0;
      let hi = written;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (seqs[mid]! < seq) lo = mid + 1;
        else hi = mid;
      }
      if (lo >= written || seqs[lo] !== seq) return undefined;
      try {
        if (readSync(fd, row, 0, rowBytes, lo * rowBytes) !== rowBytes) return undefined;
      } catch {
        return undefined; // the database still has it
      }
      const vector = new Float32Array(dim);
      Buffer.from(vector.buffer).set(row.subarray(UUID_BYTES));
      const hex = row.toString('hex', 0, UUID_BYTES);
      const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      return { id, vector };
    },
    close() {
      if (fd === undefined) return;
      closeSync(fd);
      fd = undefined;
    },
  };
}
