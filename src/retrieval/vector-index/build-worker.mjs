// The thread that builds a copy's clusters (build-thread.ts has the work, background-build.ts the other side).
// Plain JavaScript, so the thread starts the same under Node, tsx and vitest; the TypeScript it runs is loaded by the
// loader the process was started with (bin/svc and tsx give it to every thread), by Node itself where it strips
// types, and otherwise (vitest on Node 20) through tsx's API.
import { parentPort, workerData } from 'node:worker_threads';

const url = new URL('./build-thread.ts', import.meta.url).href;
let thread;
try {
  thread = await import(url);
} catch (error) {
  if (error?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
  const { tsImport } = await import('tsx/esm/api');
  thread = await tsImport(url, import.meta.url);
}
thread.serve(parentPort, workerData);
