import { readFile } from 'node:fs/promises';

// The SIMD kernel is kept as readable WAT and assembled by wabt once per process, so the repository holds no binary.
// Measured on the 2-core machine: 50-90 ms once, nearly all of it loading and starting wabt (the engine compiles the
// module of about 500 bytes in 0.1 ms); each index then instantiates it in about 20 µs, with its own memory.

export type Kernel = {
  readonly memory: WebAssembly.Memory;
  /** Exact i32 dot products of the i16 query at `query` with `groups`*4 interleaved i8 rows at `rows`, into `out`. */
  dots(query: number, rows: number, groups: number, stride: number, out: number): void;
  /** Copies the `stride` bytes at `from` into a group: byte block j (16 bytes) to `to` + 64·j. */
  place(from: number, to: number, stride: number): void;
};

let compiled: Promise<WebAssembly.Module> | undefined;
let compileMs: number | undefined;

/** The compiled kernel module, assembled on first use. */
export function kernelModule(): Promise<WebAssembly.Module> {
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

async function assemble(): Promise<WebAssembly.Module> {
  const started = performance.now();
  // wabt is loaded only here: a process that never builds an index never pays for it
  const { default: initWabt } = await import('wabt');
  const [wabt, source] = await Promise.all([initWabt(), readFile(new URL('./kernel.wat', import.meta.url), 'utf8')]);
  const parsed = wabt.parseWat('kernel.wat', source, { simd: true });
  try {
    parsed.validate();
    // synchronous: the binary is under 500 bytes, and the async compile measured 40-60 ms against 0.1 ms
    const module = new WebAssembly.Module(new Uint8Array(parsed.toBinary({}).buffer));
    compileMs = performance.now() - started;
    return module;
  } finally {
    parsed.destroy();
  }
}

/** A fresh instance with its own memory (one page; callers grow it). */
export function instantiateKernel(module: WebAssembly.Module): Kernel {
  return new WebAssembly.Instance(module).exports as unknown as Kernel;
}
