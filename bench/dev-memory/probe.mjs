// Loaded into the measured process with `--import` (workers inherit it through execArgv): every second, each thread
// writes its own V8 heap figures to a file of the folder SVC_BENCH_PROBE_DIR names, so the bench can say how much of
// the resident set is JavaScript heap, and on which thread, without an endpoint in the product for it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { isMainThread, threadId } from 'node:worker_threads';

const dir = process.env.SVC_BENCH_PROBE_DIR;
if (dir) {
  const file = join(dir, `${threadId}.json`);
  const write = (alive) => {
    const h = getHeapStatistics();
    const row = {
      threadId,
      main: isMainThread,
      script: process.argv[1] ?? '',
      alive,
      at: Date.now(),
      heapTotal: h.total_heap_size,
      heapUsed: h.used_heap_size,
      external: h.external_memory ?? 0,
      malloced: h.malloced_memory,
    };
    try {
      writeFileSync(file, JSON.stringify(row));
    } catch {}
  };
  write(true);
  setInterval(() => write(true), 1000).unref();
  process.on('exit', () => write(false));
}
