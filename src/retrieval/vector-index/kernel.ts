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
  /**
   * Present where the engine has relaxed SIMD: Σ row[i]·query[i] for the u8 query at `query` (values 64 + q), the
   * coarse first pass (kernel-relaxed.wat).
   */
  dots7?(query: number, rows: number, groups: number, stride: number, out: number): void;
};

/** The kernel, and its relaxed-SIMD pass where the engine compiles it (Node 22 and later; not Node 20). */
export type KernelModules = { readonly portable: WebAssembly.Module; readonly relaxed?: WebAssembly.Module };

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
  const modules: { portable: WebAssembly.Module; relaxed?: WebAssembly.Module } = { portable: new WebAssembly.Module(binaries.portable) };
  try {
    modules.relaxed = new WebAssembly.Module(binaries.relaxed);
  } catch {
    // an engine without relaxed SIMD refuses the module: the portable kernel does both passes' work
  }
  compileMs = performance.now() - started;
  return modules;
}

type Binaries = { portable: Uint8Array<ArrayBuffer>; relaxed: Uint8Array<ArrayBuffer> };

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

/** A fresh instance with its own memory (one page; callers grow it), with the relaxed pass unless told not to. */
export function instantiateKernel(modules: KernelModules, opts: { relaxed?: boolean } = {}): Kernel {
  const kernel = new WebAssembly.Instance(modules.portable).exports as unknown as Kernel;
  if (!modules.relaxed || opts.relaxed === false) return kernel;
  const { dots7 } = new WebAssembly.Instance(modules.relaxed, { kernel: { memory: kernel.memory } }).exports as unknown as Required<Kernel>;
  return { memory: kernel.memory, dots: kernel.dots, place: kernel.place, copy: kernel.copy, dots7 };
}
