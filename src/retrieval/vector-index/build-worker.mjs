// The thread that builds a copy's clusters (build-thread.ts has the work, background-build.ts the other side).
import { parentPort, workerData } from 'node:worker_threads';
import { importTypeScript } from './import-ts.mjs';

const thread = await importTypeScript(new URL('./build-thread.ts', import.meta.url).href);
thread.serve(parentPort, workerData);
