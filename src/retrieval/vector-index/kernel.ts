import { Worker } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from '../../platform/worker-heap.ts';

// The SIMD kernel is kept as readable WAT and assembled by wabt once per process, so the repository holds no binary.
// Measured on the 2-core machine: 50-90 ms once, nearly all of it loading and starting wabt (the engine compiles the
// module of about 500 bytes in 0.1 ms); each index then instantiates it in about 20 µs, with its own memory. wabt
// runs on a worker thread that ends once the binaries are back: loaded on the main thread it stayed, about 20 MB.

export type Kernel = {
  readonly memory: WebAssembly.Memory;
  /** Exact i32 dot products of the i16 query at `query` with `groups`*4 interleaved i8 rows at `rows`, into `out`. */
  dots(query: number, rows: number, groups: number, stride: number, out: number): void;
  /** Copies the `stride` bytes at `from` into a group (byte block j of 16 bytes to `to` + 64·j); answers their sum. */
  place(from: number, to: number, stride: number): number;
  /** Copies `count` 16-byte blocks, block i from `from` + i·fromStep to `to` + i·toStep (moving rows). */
  copy(from: number, fromStep: number, to: number, toStep: number, count: number): void;
  /** Reads `groups`·4 rows of `stride` bytes at `rows` and does nothing else: a pass's floor, for benchmarks. */
  read(rows: number, groups: number, stride: number): number;
  /**
   * Of the ⌈count/4⌉·4 rows whose dot products are at `out` (i32 each), the positions i with out[i] − shift·sums[i] >
   * `under` (the i32 at `sums` + 4i), appended in order to `list` (i32 each); answers how many.
   */
  above(out: number, sums: number, shift: number, count: number, under: number, list: number): number;
  /**
   * Present where the engine has relaxed SIMD: Σ row[i]·query[i] for the u8 query at `query` (values 64 + q), the
   * coarse first pass (kernel-relaxed.wat).
   */
  dots7?(query: number, rows: number, groups: number, stride: number, out: number): void;
};

/**
 * The kernel, and its relaxed-SIMD pass where the engine compiles it (Node 22 and later; not Node 20); `shared`, the
 * same on an imported shared memory, where the engine has shared WebAssembly memory (for split.ts).
 */
export type KernelModules = {
  readonly portable: WebAssembly.Module;
  readonly relaxed?: WebAssembly.Module;
  readonly shared?: { readonly portable: WebAssembly.Module; readonly relaxed?: WebAssembly.Module };
};

/** Pages of 64 KiB a shared memory is declared to grow to (it cannot move, so the engine reserves them): 4 GiB. */
export const SHARED_PAGES = 65536;

let compiled: Promise<KernelModules> | undefined;
let compileMs: number | undefined;

/** The compiled kernel modules, assembled on first use. */
export function kernelModule(): Promise<KernelModules> {
  compiled ??= assemble().catch((error: unknown) => {
    compiled = undefined; // a failed load may be retried
    throw error;
  });
  return compiled;
}

/** Milliseconds the one-time assembly and compilation took, once it has happened. */
export function kernelCompileMs(): number | undefined {
  return compileMs;
}

async function assemble(): Promise<KernelModules> {
  const started = performance.now();
  const binaries = await assembleInWorker();
  // synchronous: each binary is under 600 bytes, and the async compile measured 40-60 ms against 0.1 ms
  const modules: { -readonly [K in keyof KernelModules]: KernelModules[K] } = { portable: new WebAssembly.Module(binaries.portable) };
  const relaxed = (binary: Uint8Array<ArrayBuffer>) => {
    try {
      return new WebAssembly.Module(binary);
    } catch {
      return undefined; // an engine without relaxed SIMD refuses the module: the portable kernel does both passes' work
    }
  };
  const portableRelaxed = relaxed(binaries.relaxed);
  if (portableRelaxed) modules.relaxed = portableRelaxed;
  try {
    new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
    const sharedRelaxed = relaxed(binaries.sharedRelaxed);
    const portable = new WebAssembly.Module(binaries.sharedPortable);
    modules.shared = sharedRelaxed ? { portable, relaxed: sharedRelaxed } : { portable };
  } catch {
    // no shared memory here: every pass stays on one thread
  }
  compileMs = performance.now() - started;
  return modules;
}

type Binaries = Record<'portable' | 'relaxed' | 'sharedPortable' | 'sharedRelaxed', Uint8Array<ArrayBuffer>>;

/** The kernel's binaries, from a thread that loads wabt and ends (assemble-worker.mjs). */
function assembleInWorker(): Promise<Binaries> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./assemble-worker.mjs', import.meta.url), { resourceLimits: WORKER_RESOURCE_LIMITS });
    worker.once('message', (binaries: Binaries) => {
      resolve(binaries);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the kernel's assembly stopped before it answered (exit code ${code})`)));
  });
}

/**
 * A fresh instance with its own memory (one page; callers grow it), with the relaxed pass unless told not to; on
 * `memory` (a shared one, modules.shared) when given: the instance each thread of a split pass has on the same rows.
 */
export function instantiateKernel(modules: KernelModules, opts: { relaxed?: boolean; memory?: WebAssembly.Memory } = {}): Kernel {
  const { memory } = opts;
  if (memory && !modules.shared) throw new Error('this engine has no shared WebAssembly memory');
  const from = memory ? modules.shared! : modules;
  const imports: WebAssembly.Imports = memory ? { kernel: { memory } } : {};
  const exports = new WebAssembly.Instance(from.portable, imports).exports as unknown as Kernel;
  const kernel: Kernel = {
    memory: memory ?? exports.memory,
    dots: exports.dots,
    place: exports.place,
    copy: exports.copy,
    read: exports.read,
    above: exports.above,
  };
  if (!from.relaxed || opts.relaxed === false) return kernel;
  const { dots7 } = new WebAssembly.Instance(from.relaxed, { kernel: { memory: kernel.memory } }).exports as unknown as Required<Kernel>;
  return { ...kernel, dots7 };
}
