// What a process holds, read from outside it (Linux /proc): its resident set, the WebAssembly memories in it, and
// the JavaScript heap of each of its threads as probe.mjs writes them.
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

export type ThreadHeap = { threadId: number; main: boolean; script: string; at: number; heapTotal: number; external: number };
export type Breakdown = { rss: number; wasm: number[]; heaps: ThreadHeap[]; threads: number };

const KIB = 1024;
// V8 reserves a WebAssembly memory with guard pages: the committed part (rw-p), then the rest of a reservation of
// 8 GiB or more (---p) right after it. No other mapping of a Node process looks like that.
const GUARDED = 8 * 2 ** 30 - 2 ** 26;

export async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) * KIB;
}

/** The resident bytes of each WebAssembly memory in the process. */
export async function wasmMemories(pid: number): Promise<number[]> {
  const smaps = await readFile(`/proc/${pid}/smaps`, 'utf8');
  const vmas: { start: bigint; end: bigint; perms: string; rss: number }[] = [];
  for (const line of smaps.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+)/.exec(line);
    if (head) vmas.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3]!, rss: 0 });
    const resident = /^Rss:\s+(\d+) kB/.exec(line);
    if (resident && vmas.length) vmas[vmas.length - 1]!.rss = Number(resident[1]) * KIB;
  }
  const out: number[] = [];
  for (let i = 0; i + 1 < vmas.length; i++) {
    const [used, guard] = [vmas[i]!, vmas[i + 1]!];
    if (
      used.perms.startsWith('rw') &&
      guard.perms.startsWith('---') &&
      used.end === guard.start &&
      Number(guard.end - used.start) >= GUARDED
    )
      out.push(used.rss);
  }
  return out;
}

/** Each live thread's heap as the probe last wrote it (files older than a few seconds are threads that ended). */
export async function threadHeaps(dir: string): Promise<ThreadHeap[]> {
  const rows: ThreadHeap[] = [];
  for (const file of await readdir(dir).catch(() => [])) {
    const row = JSON.parse(await readFile(join(dir, file), 'utf8').catch(() => '{}')) as ThreadHeap & { alive?: boolean };
    if (row.alive && Date.now() - row.at < 5000) rows.push({ ...row, script: basename(row.script) });
  }
  return rows.sort((a, b) => a.threadId - b.threadId);
}

export async function breakdown(pid: number, probeDir?: string): Promise<Breakdown> {
  const threads = (await readdir(`/proc/${pid}/task`)).length;
  return { rss: await rss(pid), wasm: await wasmMemories(pid), heaps: probeDir ? await threadHeaps(probeDir) : [], threads };
}

/**
 * The resident set once it stops moving: sampled every second until five samples in a row lie within 4 MiB (at most
 * `maxMs`), the last of them. A process that has just started or just worked is still allocating and collecting.
 */
export async function settledRss(pid: number, maxMs = 60_000): Promise<number> {
  const samples: number[] = [];
  const deadline = Date.now() + maxMs;
  for (;;) {
    samples.push(await rss(pid));
    const last = samples.slice(-5);
    if ((last.length === 5 && Math.max(...last) - Math.min(...last) < 4 * 2 ** 20) || Date.now() > deadline) return samples.at(-1)!;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
