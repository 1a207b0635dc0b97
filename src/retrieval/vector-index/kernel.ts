import { readFile } from 'node:fs/promises';

// The SIMD kernel is kept as readable WAT and assembled by wabt once per process, so the repository holds no binary.
// Measured on the 2-core machine: 50-90 ms once, nearly all of it loading and starting wabt (the engine compiles the
// module of about 1 KB in 0.1 ms); each index then instantiates it in about 20 µs, on a memory of its own. The
// memory is shared (WebAssembly threads) so the helper threads of parallel.ts can work on the same rows.

export type Kernel = {
  readonly memory: WebAssembly.Memory;
  /** Exact i32 dot products of the i16 query at `query` with `groups`*4 interleaved i8 rows at `rows`, into `out`. */
  dots(query: number, rows: number, groups: number, stride: number, out: number): void;
  /** Copies the `stride` bytes at `from` into a group: byte block j (16 bytes) to `to` + 64·j. */
  place(from: number, to: number, stride: number): void;
  /** The rows of a range left in the running for the top k, by the bound of rank.ts (see kernel.wat); their count. */
  select(
    out: number,
    bounds: number,
    rows: number,
    k: number,
    heap: number,
    upper: number,
    qScale: number,
    qResidual: number,
    qLength: number,
    slack: number,
  ): number;
};

/**
 * The compiled kernel and its binary (a helper thread compiles the binary again: 0.1 ms). `shared`: its memory is
 * shared; false only where the runtime has no shared WebAssembly memory, and then every pass stays on one thread.
 */
export type KernelModule = { readonly module: WebAssembly.Module; readonly binary: Uint8Array; readonly shared: boolean };

/** Pages of 64 KiB the kernel's memory may grow to: the whole 32-bit address space, 4 GiB. */
export const MAX_PAGES = 65536;

let compiled: Promise<KernelModule> | undefined;
let compileMs: number | undefined;

/** The compiled kernel module, assembled on first use. */
export function kernelModule(): Promise<KernelModule> {
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

async function assemble(): Promise<KernelModule> {
  const started = performance.now();
  // wabt is loaded only here: a process that never builds an index never pays for it
  const { default: initWabt } = await import('wabt');
  const [wabt, source] = await Promise.all([initWabt(), readFile(new URL('./kernel.wat', import.meta.url), 'utf8')]);
  const shared = sharedMemoryWorks();
  const text = shared ? source : source.replace(SHARED_MEMORY, SHARED_MEMORY.replace(' shared', ''));
  const features = { simd: true, threads: true };
  const parsed = wabt.parseWat('kernel.wat', text, features);
  try {
    // the validator takes its own features (wabt's typings omit the argument): without them it refuses shared memory
    (parsed.validate as (features: object) => void)(features);
    const binary = new Uint8Array(parsed.toBinary({}).buffer);
    // synchronous: the binary is about 1 KB, and the async compile measured 40-60 ms against 0.1 ms
    const module = new WebAssembly.Module(binary);
    compileMs = performance.now() - started;
    return { module, binary, shared };
  } finally {
    parsed.destroy();
  }
}

const SHARED_MEMORY = `(memory 1 ${MAX_PAGES} shared)`;

function sharedMemoryWorks(): boolean {
  try {
    return new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }).buffer instanceof SharedArrayBuffer;
  } catch {
    return false;
  }
}

/** A fresh instance on a fresh memory of one page (callers grow it). */
export function instantiateKernel({ module, shared }: KernelModule): Kernel {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: MAX_PAGES, shared });
  const { dots, place, select } = new WebAssembly.Instance(module, { kernel: { memory } }).exports as unknown as Kernel;
  return { memory, dots, place, select };
}
