// Assembles the kernel's WAT into wasm binaries with wabt, on a thread of its own (kernel.ts is the other side): wabt's
// runtime, about 20 MB of resident memory, stays with the thread that loaded it, so it goes when this thread ends.
// Plain JavaScript so that it runs the same under Node, tsx, vitest and Bun.
import { readFile } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import initWabt from 'wabt';

const wabt = await initWabt();
const binaries = {};
for (const [key, file] of [
  ['portable', 'kernel.wat'],
  ['relaxed', 'kernel-relaxed.wat'],
]) {
  const parsed = wabt.parseWat(file, await readFile(new URL(`./${file}`, import.meta.url), 'utf8'), { simd: true, relaxed_simd: true });
  try {
    parsed.validate();
    binaries[key] = parsed.toBinary({}).buffer;
  } finally {
    parsed.destroy();
  }
}
parentPort.postMessage(binaries);
