import { readFile } from 'node:fs/promises';
import initWabt from 'wabt';

// The SIMD kernel is kept as readable WAT and assembled once per process (no binary in the repository).
let compiled: Promise<WebAssembly.Module> | undefined;

export function kernelModule(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const wabt = await initWabt();
    const source = await readFile(new URL('./kernel.wat', import.meta.url), 'utf8');
    const parsed = wabt.parseWat('kernel.wat', source, { simd: true });
    try {
      return await WebAssembly.compile(new Uint8Array(parsed.toBinary({}).buffer));
    } finally {
      parsed.destroy();
    }
  })();
  return compiled;
}

export type Kernel = {
  memory: WebAssembly.Memory;
  dots(q: number, m: number, rows: number, stride: number, out: number): void;
};

export async function instantiateKernel(): Promise<Kernel> {
  const instance = await WebAssembly.instantiate(await kernelModule());
  return instance.exports as unknown as Kernel;
}
