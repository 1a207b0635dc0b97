// Assembles the kernel's WAT into wasm binaries with wabt, on a thread of its own (kernel.ts is the other side): wabt's
// runtime, about 20 MB of resident memory, stays with the thread that loaded it, so it goes when this thread ends.
// Plain JavaScript so that it runs the same under Node, tsx, vitest and Bun.
// Each module twice: as written (the portable one with a memory of its own), and on an imported shared memory (up to
// 4 GiB, the whole 32-bit space) for a copy whose pass is split across threads (split.ts).
import { readFile } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import initWabt from 'wabt';

const SHARED = '(import "kernel" "memory" (memory 1 65536 shared))';
const variants = [
  ['portable', 'kernel.wat', (text) => text],
  ['relaxed', 'kernel-relaxed.wat', (text) => text],
  ['sharedPortable', 'kernel.wat', (text) => text.replace('(memory (export "memory") 1)', SHARED)],
  ['sharedRelaxed', 'kernel-relaxed.wat', (text) => text.replace('(import "kernel" "memory" (memory 1))', SHARED)],
];
const features = { simd: true, relaxed_simd: true, threads: true };
const wabt = await initWabt();
const binaries = {};
for (const [key, file, edit] of variants) {
  const source = edit(await readFile(new URL(`./${file}`, import.meta.url), 'utf8'));
  const parsed = wabt.parseWat(file, source, features);
  try {
    parsed.validate(features); // the validator takes its own features: without them it refuses a shared memory
    binaries[key] = parsed.toBinary({}).buffer;
  } finally {
    parsed.destroy();
  }
}
parentPort.postMessage(binaries);
