import { instantiateKernel, SHARED_PAGES, type Kernel, type KernelModules } from './kernel.ts';
import { CODE_HEADER, encodeRow, quantise, ROW_LEVELS } from './quantise.ts';
import { candidates, candidatesOf, LIMIT_NORM, LIMIT_RESIDUAL, LIMIT_SCALE, type QueryBounds } from './rank.ts';
import { splitPass, splitThreads, startSplitWorkers, type PassFunction, type SharedBounds, type SplitPass } from './split.ts';

// Where the int8 rows live: in the kernel's WebAssembly memory, interleaved in groups of four (see kernel.wat), for
// the approximate pass over everything; per row also the quantisation scale, ‖x − x̂‖ and ‖x̂‖ (float32, rounded
// up), for the bound. The float rows for exact scores are kept by the caller (in memory, or in the database).

const PAGE = 65536;
/** Codes writeCodes copies into the kernel's memory at once: a read of the socket's worth (postgres.ts). */
const BLOCK_STAGE_BYTES = 128 * 1024;
/**
 * Rows from which a store that may split its pass (opts.split) moves into a shared memory and splits it across the
 * cores (split.ts): below, the pass takes a few milliseconds, and a memory that is never shared is simply collected.
 */
export const SPLIT_FROM_ROWS = 65_536;

export type RowStore = {
  /** Bytes held: the kernel's memory and the per-row bounds. */
  readonly bytes: number;
  readonly scale: Float32Array;
  readonly residual: Float32Array;
  readonly norm: Float32Array;
  /** At least the largest scale, ‖x − x̂‖ and ‖x̂‖ of any row written (rank.ts RowBounds): they only grow. */
  readonly limits: Float32Array;
  /** Room for `rows` rows without growing again. */
  reserve(rows: number): void;
  /** Stores the float32 unit vector `unit` as row `row` (row < capacity); the values exact scores will use. */
  write(row: number, unit: Float32Array): void;
  /** Stores row `row` from its code (rowCode: the bounds, then dim int8 values), as write() would have. */
  writeCode(row: number, code: Uint8Array): void;
  /**
   * Stores rows first..first+count-1 as writeCode would, row first+i from the code at bytes[codeAt[i]..] (CODE_HEADER
   * + dim bytes, checked by the caller; room reserved): a piece of a load at once.
   */
  writeCodes(first: number, bytes: Uint8Array, codeAt: Int32Array, count: number): void;
  /**
   * Rows 0..rows-1 whose exact score with the unit query `unit` may be among the best `k` (rank.ts), with each one's
   * upper bound; undefined for a zero query (it scores 0 against every row).
   */
  candidates(unit: Float64Array, rows: number, k: number): { rows: number[]; upper: number[] } | undefined;
  /** Quantises the unit query for fineDots and answers its bounds; undefined for a zero query. */
  setQuery(unit: Float64Array): QueryBounds | undefined;
  /** The set query's exact integer dot products with rows from..to-1, by position in the answer (dots[row]). */
  fineDots(from: number, to: number): Int32Array;
  /**
   * Σ row[i]·q[i] for the int8 `q` (values in [-63, 63], stride long), rows from..to-1, by position; for clustering.
   * `wide` uses the i16 kernel even where the relaxed one is present (no per-row correction: cheaper for short rows).
   */
  roughDots(q: Int8Array, from: number, to: number, wide?: boolean): Int32Array;
  /** Row `row`'s int8 values into `out` (stride long, zero past dim). */
  readRow(row: number, out: Int8Array): void;
  /** Moves rows so that row p holds what row order[p] held, for p < order.length (a permutation of 0..length-1). */
  permute(order: Int32Array): void;
  /** Stores row `row` of `other` (a store of the same dimension) as row `to` of this one (to < capacity). */
  copyRow(other: RowStore, row: number, to: number): void;
  /**
   * A copy of rows from..to-1 (from a multiple of 4) that another store, on another thread, can take in; into `stage`
   * where given (rowBlockBytes(dim, to - from) at least: the block's arrays are views on it), else into new buffers.
   */
  exportRows(from: number, to: number, stage?: SharedArrayBuffer): RowBlock;
  /** Stores a block exportRows gave, at the same rows (reserved already). */
  importRows(block: RowBlock): void;
  /** Threads the full pass over rows 0..rows-1 is split across now (1: this thread alone). */
  threads(rows: number): number;
  /** Ranges of full passes that workers took (split.ts), since the store was made. */
  readonly workerRanges: number;
  /** Reads rows 0..rows-1 once, split as the full pass is, doing nothing else: the pass's floor (benchmarks). */
  readAll(rows: number): number;
  /** For a store replaced or dropped: the workers let go of its memory, so it is freed once this thread drops it. */
  release(): void;
};

/** Rows as the kernel holds them (whole groups of four, interleaved) with their bounds: transferable buffers. */
export type RowBlock = {
  from: number;
  to: number;
  groups: Uint8Array;
  scale: Float32Array;
  residual: Float32Array;
  norm: Float32Array;
  sums: Int32Array;
};

/** Bytes of an exported block of `rows` rows from a multiple of 4 (its groups, one more than whole, and bounds). */
export function rowBlockBytes(dim: number, rows: number): number {
  return (Math.ceil(rows / 4) + 1) * 4 * Math.ceil(dim / 16) * 16 + 16 * rows;
}

/** The coarse query's steps a side: 64 + q must be a 7-bit value (kernel-relaxed.wat). */
const COARSE_LEVELS = 63;
/** Above this share of the rows kept by the coarse pass, one fine pass over everything is cheaper than per group. */
const COARSE_KEEPS_TOO_MANY = 1 / 8;

/**
 * The query's integer range for `dim` dimensions: as fine as i16 allows, while no i32 in the kernel can overflow
 * (stride·127·levels < 2^31). 22 017 at 768 dimensions, so the query's own rounding barely widens the bound.
 */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function queryLevelsFor(dim: number): number {
  return Math.min(32767, Math.floor((2 ** 31 - 1) / (Math.ceil(dim / 16) * 16 * ROW_LEVELS)));
}

/**
 * `split`: from SPLIT_FROM_ROWS rows, the full pass is split across the available cores (a copy's store; not a
 * thread's own store such as the clusters' build). `threads` overrides the count of cores (tests).
 */
export function createRowStore(
  modules: KernelModules,
  dim: number,
  opts: { relaxed?: boolean; split?: boolean; threads?: number } = {},
): RowStore {
  const stride = Math.ceil(dim / 16) * 16;
  // after the i16 query: one row being stored, its code's header in the bytes just before it (a code is copied whole)
  const stageAt = Math.ceil((2 * stride + CODE_HEADER) / 64) * 64;
  const coarseAt = stageAt + Math.ceil(stride / 64) * 64; // the relaxed pass's u8 query
  const rowsAt = coarseAt + Math.ceil(stride / 64) * 64;
  const queryLevels = queryLevelsFor(dim);
  if (queryLevels < 1) throw new RangeError(`dimension ${dim} is too large for the index`);

  let kernel: Kernel = instantiateKernel(modules, opts);
  const threads = opts.split && modules.shared ? (opts.threads ?? splitThreads()) : 1;
  let pass: SplitPass | undefined;
  let released = false;
  let capacity = 0;
  let memory = new Uint8Array(kernel.memory.buffer);
  let floats = new Float32Array(kernel.memory.buffer); // the staged code's header, read in place (little-endian)
  // on shared buffers once the pass is split, so that each thread selects its own range's rows
  let scale: Float32Array = new Float32Array(0);
  let residual: Float32Array = new Float32Array(0);
  let norm: Float32Array = new Float32Array(0);
  // each row's Σ of its int8 values, for the relaxed pass: in the kernel's memory (sumsAt), where the selection's
  // first test (kernel.ts above) reads them; a view made again whenever the memory grows
  let sums: Int32Array = new Int32Array(0);
  let limits: Float32Array = new Float32Array(3);
  /** Row `row`'s bounds, as just written, into the limits. */
  const widen = (row: number) => {
    if (scale[row]! > limits[LIMIT_SCALE]!) limits[LIMIT_SCALE] = scale[row]!;
    if (residual[row]! > limits[LIMIT_RESIDUAL]!) limits[LIMIT_RESIDUAL] = residual[row]!;
    if (norm[row]! > limits[LIMIT_NORM]!) limits[LIMIT_NORM] = norm[row]!;
  };
  const fineQuery = new Int16Array(stride);
  const coarse = new Int8Array(stride);
  const code = new Uint8Array(CODE_HEADER + dim);
  const staged = new Int8Array(stride); // a row read from another store (zero past dim, as stored)
  const stagedBytes = new Uint8Array(staged.buffer);

  const outAt = () => rowsAt + capacity * stride;
  const groupOutAt = () => outAt() + capacity * 4; // one group's four fine dot products
  const keptAt = () => groupOutAt() + 16; // a split pass's rows kept, one i32 a row (each range at its own rows)
  const blockStage = Math.max(BLOCK_STAGE_BYTES, CODE_HEADER + dim); // and 8 bytes to align the copy
  const keptBoundsAt = () => keptAt() + capacity * 4; // and their bounds, two f64 a row (16-byte aligned, as keptAt)
  const sumsAt = () => keptBoundsAt() + capacity * 16; // the rows' sums, one i32 a row (moved as the memory grows)
  const blockAt = () => sumsAt() + capacity * 4; // writeCodes' codes, copied in a block at a time
  /** The full pass of `fn` over rows 0..rows-1 into the results, split where the store is shared. */
  const passAll = (fn: PassFunction, query: number, rows: number) => {
    const groups = Math.ceil(rows / 4);
    if (pass) return pass.run(fn, query, rowsAt, groups, stride, outAt());
    if (fn === 'read') return kernel.read(rowsAt, groups, stride);
    kernel[fn]!(query, rowsAt, groups, stride, outAt());
    return 0;
  };
  /**
   * The full pass of `fn` over rows 0..rows-1 and the rows that may hold the top k by its dot products (rank.ts);
   * split, each thread selects its range's rows and the union is selected from again, which gives the same rows.
   */
  const selectAll = (fn: 'dots' | 'dots7', query: number, rows: number, k: number, bounds: QueryBounds, shift: number) => {
    if (!pass) {
      const relaxed = shift ? { sums, shift } : {};
      passAll(fn, query, rows);
      return candidates(new Int32Array(kernel.memory.buffer, outAt(), rows), store, bounds, rows, k, relaxed);
    }
    const union = pass.select(fn, query, rowsAt, stride, outAt(), {
      query: bounds,
      k,
      shift,
      sums: sumsAt(),
      count: rows,
      kept: keptAt(),
      bounds: keptBoundsAt(),
    });
    return candidatesOf(union.rows, union.upper, union.lower, union.rows.length, k);
  };
  /** The rows so far into a shared memory of `bytes` (once, when the store reaches SPLIT_FROM_ROWS). */
  const share = (bytes: number) => {
    void startSplitWorkers(modules, threads); // started with the replica (indexes.ts), else while the rows load
    const pages = Math.ceil(bytes / PAGE);
    const memory = new WebAssembly.Memory({ initial: pages, maximum: SHARED_PAGES, shared: true });
    new Uint8Array(memory.buffer).set(new Uint8Array(kernel.memory.buffer));
    kernel = instantiateKernel(modules, { ...opts, memory });
    pass = splitPass(modules, kernel, threads, Math.ceil(SPLIT_FROM_ROWS / 4));
  };
  const grown = <T extends Float32Array | Int32Array>(old: T, length: number): T => {
    const Kind = old.constructor as new (buffer: ArrayBufferLike) => T;
    const fresh = new Kind(pass ? new SharedArrayBuffer(4 * length) : new ArrayBuffer(4 * length));
    fresh.set(old);
    return fresh;
  };

  const store: RowStore = {
    get bytes() {
      return kernel.memory.buffer.byteLength + capacity * 12;
    },
    get scale() {
      return scale;
    },
    get residual() {
      return residual;
    },
    get norm() {
      return norm;
    },
    get limits() {
      return limits;
    },
    reserve(rows) {
      if (rows > capacity) {
        const next = Math.ceil(Math.max(rows, capacity * 2, 16) / 4) * 4; // whole groups of four
        // query, rows, one i32 result per row, one group's, one i32 a row kept by a split pass and its two f64 bounds,
        // the rows' sums, writeCodes' block
        const needed = rowsAt + next * stride + next * 4 + 16 + next * 4 + next * 16 + next * 4 + blockStage + 8;
        const sumsWere = sumsAt();
        const have = kernel.memory.buffer.byteLength;
        try {
          if (!pass && !released && threads > 1 && next >= SPLIT_FROM_ROWS) share(needed);
          else if (needed > have) kernel.memory.grow(Math.ceil((needed - have) / PAGE));
        } catch (error) {
          throw new RangeError(`the index cannot grow to ${rows} rows of dimension ${dim}: ${(error as Error).message}`);
        }
        memory = new Uint8Array(kernel.memory.buffer);
        floats = new Float32Array(kernel.memory.buffer);
        scale = grown(scale, next);
        residual = grown(residual, next);
        norm = grown(norm, next);
        limits = grown(limits, 3);
        pass?.setBounds({ scale, residual, norm, limits } as SharedBounds);
        const had = capacity;
        capacity = next;
        // the sums to their place for the new capacity (further on: copyWithin copies overlapping bytes as they were)
        memory.copyWithin(sumsAt(), sumsWere, sumsWere + 4 * had);
        memory.fill(0, sumsAt() + 4 * had, sumsAt() + 4 * capacity);
        sums = new Int32Array(kernel.memory.buffer, sumsAt(), capacity);
      }
    },
    write(row, unit) {
      encodeRow(unit, dim, code);
      store.writeCode(row, code);
    },
    writeCode(row, code) {
      if (code.length !== CODE_HEADER + dim) throw new RangeError(`a row code of ${code.length} bytes does not hold ${dim} dimensions`);
      // the staging area is zero past dim, so the padding of every row stays zero; one copy of the whole code, with
      // no view made of its parts (a load writes every row of a collection through here)
      memory.set(code, stageAt - CODE_HEADER);
      sums[row] = kernel.place(stageAt, rowsAt + (row >> 2) * 4 * stride + (row & 3) * 16, stride);
      if (LITTLE_ENDIAN) {
        const at = (stageAt - CODE_HEADER) >> 2;
        scale[row] = floats[at]!;
        residual[row] = floats[at + 1]!;
        norm[row] = floats[at + 2]!;
      } else {
        const view = new DataView(code.buffer, code.byteOffset, CODE_HEADER);
        scale[row] = view.getFloat32(0, true);
        residual[row] = view.getFloat32(4, true);
        norm[row] = view.getFloat32(8, true);
      }
      widen(row);
    },
    writeCodes(first, bytes, codeAt, count) {
      const codeBytes = CODE_HEADER + dim;
      // place() moves stride bytes: past dim they must be zero, as the staging area's are, not the next code's
      if (dim !== stride || !LITTLE_ENDIAN) {
        for (let i = 0; i < count; i++) store.writeCode(first + i, bytes.subarray(codeAt[i]!, codeAt[i]! + codeBytes));
        return;
      }
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let i = 0; i < count; ) {
        // the codes that fit the block's area, copied in at once (a piece's codes lie in order, a few bytes apart), to
        // the same place modulo 8 as they come from: into a shared memory, bytes not so aligned are copied one by one
        // (five times slower: 30 ms of a 100 000-row load, measured on 11-29)
        const from = codeAt[i]!;
        const stageAt = blockAt() + ((bytes.byteOffset + from) & 7);
        let end = i + 1;
        while (end < count && codeAt[end]! + codeBytes - from <= blockStage) end++;
        memory.set(bytes.subarray(from, codeAt[end - 1]! + codeBytes), stageAt);
        for (let r = i; r < end; r++) {
          const at = codeAt[r]!;
          const row = first + r;
          sums[row] = kernel.place(stageAt + at - from + CODE_HEADER, rowsAt + (row >> 2) * 4 * stride + (row & 3) * 16, stride);
          scale[row] = view.getFloat32(at, true);
          residual[row] = view.getFloat32(at + 4, true);
          norm[row] = view.getFloat32(at + 8, true);
          widen(row);
        }
        i = end;
      }
    },
    candidates(unit, rows, k) {
      const fine = quantise(unit, dim, queryLevels, fineQuery);
      if (fine.scale === 0) return undefined;
      let length = 0;
      for (let i = 0; i < dim; i++) length += unit[i]! * unit[i]!;
      const query = { scale: fine.scale, residual: fine.residual, length: Math.sqrt(length) };
      new Int16Array(kernel.memory.buffer, 0, stride).set(fineQuery);
      const fineEverywhere = () => selectAll('dots', 0, rows, k, query, 0);
      if (!kernel.dots7) return fineEverywhere();

      // coarse: the query in 63 steps a side, offset by 64
      const q = quantise(unit, dim, COARSE_LEVELS, coarse);
      const offset = new Uint8Array(kernel.memory.buffer, coarseAt, stride);
      for (let i = 0; i < stride; i++) offset[i] = 64 + coarse[i]!;
      const kept = selectAll('dots7', coarseAt, rows, k, { ...q, length: query.length }, 64);
      if (kept.rows.length > rows * COARSE_KEEPS_TOO_MANY) return fineEverywhere();

      // fine: the i16 query's exact dot products for the kept rows, a group of four at a time
      const exact = new Int32Array(kept.rows.length);
      const four = new Int32Array(kernel.memory.buffer, groupOutAt(), 4);
      let group = -1;
      kept.rows.forEach((row, i) => {
        if (row >> 2 !== group) {
          group = row >> 2;
          kernel.dots(0, rowsAt + group * 4 * stride, 1, stride, groupOutAt());
        }
        exact[i] = four[row & 3]!;
      });
      return candidates(exact, store, query, kept.rows.length, k, { ids: kept.rows });
    },
    setQuery(unit) {
      const fine = quantise(unit, dim, queryLevels, fineQuery);
      if (fine.scale === 0) return undefined;
      let length = 0;
      for (let i = 0; i < dim; i++) length += unit[i]! * unit[i]!;
      new Int16Array(kernel.memory.buffer, 0, stride).set(fineQuery);
      return { scale: fine.scale, residual: fine.residual, length: Math.sqrt(length) };
    },
    fineDots(from, to) {
      const first = from >> 2;
      kernel.dots(0, rowsAt + first * 4 * stride, Math.ceil(to / 4) - first, stride, outAt() + first * 16);
      return new Int32Array(kernel.memory.buffer, outAt(), capacity);
    },
    roughDots(q, from, to, wide = false) {
      const first = from >> 2;
      const groups = Math.ceil(to / 4) - first;
      const out = new Int32Array(kernel.memory.buffer, outAt(), capacity);
      if (kernel.dots7 && !wide) {
        const offset = new Uint8Array(kernel.memory.buffer, coarseAt, stride);
        for (let i = 0; i < stride; i++) offset[i] = 64 + q[i]!;
        kernel.dots7(coarseAt, rowsAt + first * 4 * stride, groups, stride, outAt() + first * 16);
        for (let r = from; r < to; r++) out[r] = out[r]! - 64 * sums[r]!;
      } else {
        const wide = new Int16Array(kernel.memory.buffer, 0, stride);
        for (let i = 0; i < stride; i++) wide[i] = q[i]!;
        kernel.dots(0, rowsAt + first * 4 * stride, groups, stride, outAt() + first * 16);
      }
      return out;
    },
    readRow(row, out) {
      const words = new Int32Array(kernel.memory.buffer);
      const view = new Int32Array(out.buffer, out.byteOffset, stride >> 2);
      let at = (rowsAt + (row >> 2) * 4 * stride + (row & 3) * 16) >> 2;
      for (let j = 0; j < stride >> 2; j += 4, at += 16) {
        view[j] = words[at]!;
        view[j + 1] = words[at + 1]!;
        view[j + 2] = words[at + 2]!;
        view[j + 3] = words[at + 3]!;
      }
    },
    copyRow(other, row, to) {
      other.readRow(row, staged);
      memory.set(stagedBytes, stageAt);
      sums[to] = kernel.place(stageAt, rowsAt + (to >> 2) * 4 * stride + (to & 3) * 16, stride);
      scale[to] = other.scale[row]!;
      residual[to] = other.residual[row]!;
      norm[to] = other.norm[row]!;
      widen(to);
    },
    exportRows(from, to, stage) {
      if (from % 4 !== 0 || to > capacity || from > to) throw new RangeError(`rows ${from}..${to} cannot be exported`);
      const groupsAt = (row: number) => rowsAt + Math.ceil(row / 4) * 4 * stride;
      // a group past `to` may hold a row appended since: the importer stores it too, and never reads it
      const groups = new Uint8Array(kernel.memory.buffer, groupsAt(from), groupsAt(to) - groupsAt(from));
      if (!stage) {
        return {
          from,
          to,
          groups: groups.slice(),
          scale: scale.slice(from, to),
          residual: residual.slice(from, to),
          norm: norm.slice(from, to),
          sums: sums.slice(from, to),
        };
      }
      const n = to - from;
      if (rowBlockBytes(dim, n) > stage.byteLength) throw new RangeError(`rows ${from}..${to} do not fit the stage`);
      const block: RowBlock = {
        from,
        to,
        scale: new Float32Array(stage, 0, n),
        residual: new Float32Array(stage, 4 * n, n),
        norm: new Float32Array(stage, 8 * n, n),
        sums: new Int32Array(stage, 12 * n, n),
        groups: new Uint8Array(stage, 16 * n, groups.length),
      };
      block.groups.set(groups);
      block.scale.set(scale.subarray(from, to));
      block.residual.set(residual.subarray(from, to));
      block.norm.set(norm.subarray(from, to));
      block.sums.set(sums.subarray(from, to));
      return block;
    },
    importRows(block) {
      if (block.from % 4 !== 0 || block.to > capacity) throw new RangeError(`rows ${block.from}..${block.to} do not fit`);
      memory = new Uint8Array(kernel.memory.buffer);
      memory.set(block.groups, rowsAt + block.from * stride);
      scale.set(block.scale, block.from);
      residual.set(block.residual, block.from);
      norm.set(block.norm, block.from);
      sums.set(block.sums, block.from);
      for (let row = block.from; row < block.to; row++) widen(row);
    },
    get workerRanges() {
      return pass?.workerRanges ?? 0;
    },
    threads(rows) {
      return pass && !released && rows >= SPLIT_FROM_ROWS ? threads : 1;
    },
    readAll(rows) {
      return passAll('read', 0, rows);
    },
    release() {
      released = true;
      pass?.release();
    },
    permute(order) {
      // cycle by cycle, one row held aside (in the staging area): no second copy of the rows (a million rows are most
      // of a GiB); each row's 16-byte blocks moved by the kernel, 64 bytes apart in a group
      const at = (row: number) => rowsAt + (row >> 2) * 4 * stride + (row & 3) * 16;
      const blocks = stride >> 4;
      const done = new Uint8Array(order.length);
      for (let start = 0; start < order.length; start++) {
        if (done[start] || order[start] === start) continue;
        kernel.copy(at(start), 64, stageAt, 16, blocks);
        const heldBounds = [scale[start]!, residual[start]!, norm[start]!, sums[start]!] as const;
        let to = start;
        for (;;) {
          done[to] = 1;
          const from = order[to]!;
          if (from === start) break;
          kernel.copy(at(from), 64, at(to), 64, blocks);
          scale[to] = scale[from]!;
          residual[to] = residual[from]!;
          norm[to] = norm[from]!;
          sums[to] = sums[from]!;
          to = from;
        }
        kernel.copy(stageAt, 16, at(to), 64, blocks);
        [scale[to], residual[to], norm[to], sums[to]] = heldBounds;
      }
    },
  };

  return store;
}
