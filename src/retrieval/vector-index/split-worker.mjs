// A worker of split.ts (plain JavaScript: it runs in a worker under Node, tsx, vitest and Bun alike). It instantiates
// the kernel on each shared memory it is handed, then sleeps on its control word and runs the range it is given. A
// memory it is told to forget is dropped and collected at once: V8 frees a shared memory only once every thread that
// held it has collected (see split.ts).
import { receiveMessageOnPort, workerData } from 'node:worker_threads';

const { modules, control, port } = workerData;
// the control word's states and the kernel's functions, as split.ts writes them
const IDLE = 1;
const MAIL = 2;
const JOB = 3;
const DONE = 4;
const FAILED = 5;
const FUNCTIONS = ['dots', 'dots7', 'read'];

const state = new Int32Array(control);
/** The kernel on each memory, by the memory's id. */
const kernels = new Map();

function instantiate(memory) {
  const imports = { kernel: { memory } };
  const kernel = { ...new WebAssembly.Instance(modules.portable, imports).exports };
  if (modules.relaxed) kernel.dots7 = new WebAssembly.Instance(modules.relaxed, imports).exports.dots7;
  return kernel;
}

function readMail() {
  let forgot = false;
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const { attach, memory, forget } = m.message;
    if (attach !== undefined) kernels.set(attach, instantiate(memory));
    if (forget !== undefined) forgot = kernels.delete(forget) || forgot;
  }
  if (forgot && typeof globalThis.gc === 'function') globalThis.gc();
}

function run() {
  const kernel = kernels.get(state[1]);
  const fn = kernel?.[FUNCTIONS[state[2]]];
  if (!fn) throw new Error(`no kernel function ${state[2]} for memory ${state[1]}`);
  state[8] = fn(state[3], state[4], state[5], state[6], state[7]) ?? 0;
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
