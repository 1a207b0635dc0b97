import { instantiateKernel, type Kernel, type KernelModule } from './kernel.ts';
import { type Pending, readyHelpers, registerMemory } from './parallel.ts';
import { CODE_HEADER, encodeRow, ROW_LEVELS } from './quantise.ts';
import { candidates, type QueryBounds, type RangePass, SLACK } from './rank.ts';

// Where the int8 rows live: in the kernel's WebAssembly memory, interleaved in groups of four (see kernel.wat), for
// the approximate pass over everything; per row also its bounds (the quantisation scale, ‖x − x̂‖ and ‖x̂‖, float32
// rounded up: a code's header, as is). The float rows for exact scores are kept by the caller (in memory, or in the
// database). A large pass is split into ranges of whole groups, one per thread (parallel.ts).
//
// The memory, in order: the i16 query; one row being stored; the rows (capacity·stride); the bounds (12 bytes a
// row); each row's dot product, then the kept rows written over them (4 bytes a row); the kept rows' upper bounds
// (8 bytes a row); then scratch for one pass: per worker its own dots and upper bounds, and each thread's heap of
// k lower bounds. A worker writes only its own scratch, and the caller reads it only once the worker is done.

const PAGE = 65536;

export type RowStore = {
  /** Bytes held: the kernel's memory (rows, bounds and a pass's scratch). */
  readonly bytes: number;
  /** Integer steps of the query (query values in [-queryLevels, queryLevels]); fixed by the stride. */
  readonly queryLevels: number;
  /** Room for `rows` rows without growing again. */
  reserve(rows: number): void;
  /** Stores the float32 unit vector `unit` as row `row` (row < capacity); the values exact scores will use. */
  write(row: number, unit: Float32Array): void;
  /** Stores row `row` from its code (rowCode: the bounds, then dim int8 values), as write() would have. */
  writeCode(row: number, code: Uint8Array): void;
  /**
   * The rows of 0..rows-1 whose exact score may be among the best k (k ≤ rows) for the query `queryInts` (from
   * `quantise(…, queryLevels, …)`) with its bounds, in row order, with their upper bounds; `threads`: how many
   * threads passed the rows.
   */
  candidates(queryInts: Int16Array, rows: number, k: number, query: QueryBounds): { rows: number[]; upper: number[]; threads: number };
};

/**
 * The query's integer range for `dim` dimensions: as fine as i16 allows, while no i32 in the kernel can overflow
 * (stride·127·levels < 2^31). 22 017 at 768 dimensions, so the query's own rounding barely widens the bound.
 */
export function queryLevelsFor(dim: number): number {
  return Math.min(32767, Math.floor((2 ** 31 - 1) / (Math.ceil(dim / 16) * 16 * ROW_LEVELS)));
}

export function createRowStore(module: KernelModule, dim: number): RowStore {
  const stride = Math.ceil(dim / 16) * 16;
  const stageAt = Math.ceil((2 * stride) / 64) * 64; // after the i16 query: one row being stored
  const rowsAt = stageAt + Math.ceil(stride / 64) * 64;
  const queryLevels = queryLevelsFor(dim);
  if (queryLevels < 1) throw new RangeError(`dimension ${dim} is too large for the index`);

  const kernel: Kernel = instantiateKernel(module);
  let capacity = 0; // a multiple of 4: whole groups
  let memory = new Uint8Array(kernel.memory.buffer);
  const code = new Uint8Array(CODE_HEADER + dim);
  const boundsAt = () => rowsAt + capacity * stride;
  const outAt = () => boundsAt() + capacity * 12;
  const upperAt = () => outAt() + capacity * 4;
  const scratchAt = () => upperAt() + capacity * 8;

  /** Makes the memory at least `bytes` long. */
  function ensure(bytes: number) {
    const have = kernel.memory.buffer.byteLength;
    if (bytes > have) kernel.memory.grow(Math.ceil((bytes - have) / PAGE));
    if (memory.byteLength !== kernel.memory.buffer.byteLength) memory = new Uint8Array(kernel.memory.buffer);
  }

  /** One range's pass on this thread: dots, then select; what it kept, read out before the scratch is reused. */
  function pass(queryInts: Int16Array, first: number, count: number, k: number, query: QueryBounds, heap: number): RangePass {
    kernel.dots(0, rowsAt + first * stride, Math.ceil(count / 4), stride, outAt() + first * 4);
    const kept = kernel.select(
      outAt() + first * 4,
      boundsAt() + first * 12,
      count,
      k,
      heap,
      upperAt() + first * 8,
      query.scale,
      query.residual,
      query.length,
      SLACK,
    );
    return readPass(first, count, k, outAt() + first * 4, upperAt() + first * 8, heap, kept);
  }

  function readPass(first: number, count: number, k: number, out: number, upper: number, heap: number, kept: number): RangePass {
    const buffer = kernel.memory.buffer;
    return {
      first,
      rows: new Int32Array(buffer, out, kept),
      upper: new Float64Array(buffer, upper, kept),
      lowers: new Float64Array(buffer, heap, Math.min(k, count)).slice(), // the heap is scratch: copied out
    };
  }

  const memoryId = registerMemory(kernel);

  const store: RowStore = {
    get bytes() {
      return kernel.memory.buffer.byteLength;
    },
    queryLevels,
    reserve(rows) {
      if (rows <= capacity) return;
      const next = Math.ceil(Math.max(rows, capacity * 2, 16) / 4) * 4;
      const oldBounds = boundsAt();
      const oldCapacity = capacity;
      try {
        ensure(rowsAt + next * (stride + 12 + 4 + 8));
      } catch (error) {
        throw new RangeError(`the index cannot grow to ${rows} rows of dimension ${dim}: ${(error as Error).message}`);
      }
      capacity = next;
      // the bounds move past the new rows; where they were becomes rows, which must start out zero
      memory.copyWithin(boundsAt(), oldBounds, oldBounds + oldCapacity * 12);
      memory.fill(0, oldBounds, oldBounds + oldCapacity * 12);
    },
    write(row, unit) {
      encodeRow(unit, dim, code);
      store.writeCode(row, code);
    },
    writeCode(row, code) {
      if (code.length !== CODE_HEADER + dim) throw new RangeError(`a row code of ${code.length} bytes does not hold ${dim} dimensions`);
      // the staging area is zero past dim, so the padding of every row stays zero
      memory.set(code.subarray(CODE_HEADER), stageAt);
      kernel.place(stageAt, rowsAt + (row >> 2) * 4 * stride + (row & 3) * 16, stride);
      // a code's header is the bounds as the kernel reads them: float32, little-endian, as WebAssembly's memory is
      memory.set(code.subarray(0, CODE_HEADER), boundsAt() + row * 12);
    },
    candidates(queryInts, rows, k, query) {
      new Int16Array(kernel.memory.buffer, 0, stride).set(queryInts);
      const groups = Math.ceil(rows / 4);
      const helpers = module.shared ? readyHelpers(rows, module.binary) : [];
      const threads = Math.min(helpers.length + 1, groups);
      const share = Math.ceil(groups / threads); // groups per thread; the caller's range first
      const part = share * 4; // rows in a worker's scratch
      const heapAt = (thread: number) => scratchAt() + (threads - 1) * part * 12 + thread * k * 8;
      ensure(heapAt(threads));

      const started: { first: number; count: number; out: number; upper: number; heap: number; pending: Pending | undefined }[] = [];
      for (let t = 1; t < threads; t++) {
        const first = t * part;
        const count = Math.min(rows, first + part) - first;
        if (count <= 0) break;
        const out = scratchAt() + (t - 1) * part * 12;
        const upper = out + part * 4;
        const heap = heapAt(t);
        const pending = helpers[t - 1]!.start(memoryId, kernel.memory, {
          query: 0,
          rows: rowsAt + first * stride,
          groups: Math.ceil(count / 4),
          stride,
          out,
          bounds: boundsAt() + first * 12,
          count,
          k,
          heap,
          upper,
          qScale: query.scale,
          qResidual: query.residual,
          qLength: query.length,
          slack: SLACK,
        });
        started.push({ first, count, out, upper, heap, pending });
      }
      const passes = [pass(queryInts, 0, Math.min(rows, threads > 1 ? part : rows), k, query, heapAt(0))];
      let split = 1;
      for (const range of started) {
        const kept = range.pending?.finish();
        if (kept === undefined) {
          // not taken, failed or late: this thread passes the range, in its own part of the memory
          passes.push(pass(queryInts, range.first, range.count, k, query, heapAt(0)));
        } else {
          passes.push(readPass(range.first, range.count, k, range.out, range.upper, range.heap, kept));
          split++;
        }
      }
      return { ...candidates(passes, k), threads: split };
    },
  };
  return store;
}
