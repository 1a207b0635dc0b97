// A helper thread of parallel.ts (plain JavaScript: it runs in a worker under Node, tsx, vitest and Bun alike). It
// instantiates the kernel on each index's shared memory it is handed, then sleeps on its control word and runs
// the range it is given: the dot products and the rows they leave in the running (kernel.wat's "dots", "select").
import { receiveMessageOnPort, workerData } from 'node:worker_threads';

const { binary, control, port } = workerData;
// the control word's states, as parallel.ts writes them
const IDLE = 1;
const MAIL = 2;
const JOB = 3;
const DONE = 4;
const FAILED = 5;

const state = new Int32Array(control, 0, 16);
const floats = new Float64Array(control, 64, 4);
const module = new WebAssembly.Module(binary);
/** The kernel on each index's memory, by the index's memory id. */
const kernels = new Map();

function readMail() {
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const { attach, memory, forget } = m.message;
    if (attach !== undefined) kernels.set(attach, new WebAssembly.Instance(module, { kernel: { memory } }).exports);
    if (forget !== undefined) kernels.delete(forget);
  }
}

function run() {
  const kernel = kernels.get(state[1]);
  if (!kernel) throw new Error(`no kernel for memory ${state[1]}`);
  // query, rows, groups, stride, out | bounds, count, k, heap, upper
  kernel.dots(state[2], state[3], state[4], state[5], state[6]);
  state[11] = kernel.select(state[6], state[7], state[8], state[9], state[10], state[12], floats[0], floats[1], floats[2], floats[3]);
}

Atomics.store(state, 0, IDLE);
Atomics.notify(state, 0);
for (;;) {
  const now = Atomics.load(state, 0);
  if (now === IDLE || now === DONE || now === FAILED) {
    Atomics.wait(state, 0, now); // asleep until the caller writes the word again
    continue;
  }
  readMail();
  if (now === MAIL) Atomics.compareExchange(state, 0, MAIL, IDLE);
  else if (now === JOB) {
    let outcome = DONE;
    try {
      run();
    } catch {
      outcome = FAILED; // the caller passes the range itself
    }
    Atomics.compareExchange(state, 0, JOB, outcome);
    Atomics.notify(state, 0);
  } else break; // abandoned: the caller gave up waiting and no longer reads what this thread writes
}
