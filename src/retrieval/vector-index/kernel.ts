import { readFile } from 'node:fs/promises';

// The SIMD kernel is kept as readable WAT and assembled by wabt once per process, so the repository holds no binary.
// Measured on the 2-core machine: 50-90 ms once, nearly all of it loading and starting wabt (the engine compiles the
// module of about 500 bytes in 0.1 ms); each index then instantiates it in about 20 µs, with its own memory.

export type Kernel = {
  readonly memory: WebAssembly.Memory;
  /** Exact i32 dot products of the i16 query at `query` with `groups`*4 interleaved i8 rows at `rows`, into `out`. */
  dots(query: number, rows: number, groups: number, stride: number, out: number): void;
  /** Copies the `stride` bytes at `from` into a group (byte block j of 16 bytes to `to` + 64·j); answers their sum. */
  place(from: number, to: number, stride: number): number;
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
  // wabt is loaded only here: a process that never builds an index never pays for it
  const { default: initWabt } = await import('wabt');
  const [wabt, portable, relaxed] = await Promise.all([
    initWabt(),
    readFile(new URL('./kernel.wat', import.meta.url), 'utf8'),
    readFile(new URL('./kernel-relaxed.wat', import.meta.url), 'utf8'),
  ]);
  const compile = (name: string, source: string) => {
    const parsed = wabt.parseWat(name, source, { simd: true, relaxed_simd: true });
    try {
      parsed.validate();
      // synchronous: the binary is under 500 bytes, and the async compile measured 40-60 ms against 0.1 ms
      return new WebAssembly.Module(new Uint8Array(parsed.toBinary({}).buffer));
    } finally {
      parsed.destroy();
    }
  };
  const modules: { portable: WebAssembly.Module; relaxed?: WebAssembly.Module } = { portable: compile('kernel.wat', portable) };
  try {
    modules.relaxed = compile('kernel-relaxed.wat', relaxed);
  } catch {
    // an engine without relaxed SIMD refuses the module: the portable kernel does both passes' work
  }
  compileMs = performance.now() - started;
  return modules;
}

/** A fresh instance with its own memory (one page; callers grow it), with the relaxed pass unless told not to. */
export function instantiateKernel(modules: KernelModules, opts: { relaxed?: boolean } = {}): Kernel {
  const kernel = new WebAssembly.Instance(modules.portable).exports as unknown as Kernel;
  if (!modules.relaxed || opts.relaxed === false) return kernel;
  const { dots7 } = new WebAssembly.Instance(modules.relaxed, { kernel: { memory: kernel.memory } }).exports as unknown as Required<Kernel>;
  return { memory: kernel.memory, dots: kernel.dots, place: kernel.place, dots7 };
}
