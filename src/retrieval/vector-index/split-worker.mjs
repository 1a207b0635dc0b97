// A worker of split.ts (plain JavaScript, so the thread starts the same under Node, tsx and vitest; rank.ts, the
// selection this thread shares with the caller, is loaded by import-ts.mjs). It instantiates
// the kernel on each shared memory it is handed, then sleeps on its control word and runs the range it is given: the
// pass, then the range's selection. A memory it is told to forget is dropped and collected at once: V8 frees a shared
// memory only once every thread that held it has collected (see split.ts).
import { receiveMessageOnPort, workerData } from 'node:worker_threads';
import { importTypeScript } from './import-ts.mjs';

const rank = await importTypeScript(new URL('./rank.ts', import.meta.url).href);

const { modules, control, port } = workerData;
// the control word's states, layout and the kernel's functions, as split.ts writes them
const IDLE = 1;
const MAIL = 2;
const JOB = 3;
const DONE = 4;
const FAILED = 5;
const AT = { id: 1, fn: 2, args: 3, result: 8, select: 9, from: 10, count: 11, k: 12, shift: 13, kept: 14 };
const CONTROL_INTS = 16;
const FUNCTIONS = ['dots', 'dots7', 'read'];

const state = new Int32Array(control, 0, CONTROL_INTS);
const floats = new Float64Array(control, 4 * CONTROL_INTS, 3);
/** The kernel on each memory, with the memory and its store's bounds, by the memory's id. */
const held = new Map();

function instantiate(memory) {
  const imports = { kernel: { memory } };
  const kernel = { ...new WebAssembly.Instance(modules.portable, imports).exports };
  if (modules.relaxed) kernel.dots7 = new WebAssembly.Instance(modules.relaxed, imports).exports.dots7;
  return kernel;
}

function readMail() {
  let forgot = false;
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const { attach, memory, bounds, forget } = m.message;
    if (attach !== undefined) held.set(attach, { memory, bounds, kernel: held.get(attach)?.kernel ?? instantiate(memory) });
    if (forget !== undefined) forgot = held.delete(forget) || forgot;
  }
  if (forgot && typeof globalThis.gc === 'function') globalThis.gc();
}

function run() {
  const copy = held.get(state[AT.id]);
  const fn = copy?.kernel[FUNCTIONS[state[AT.fn]]];
  if (!fn) throw new Error(`no kernel function ${state[AT.fn]} for memory ${state[AT.id]}`);
  const args = state.slice(AT.args, AT.args + 5);
  const result = fn(...args) ?? 0;
  if (!state[AT.select]) {
    state[AT.result] = result;
    return;
  }
  // the range's selection, exactly as split.ts runs it on the caller's range
  const from = state[AT.from];
  const count = state[AT.count];
  const shift = state[AT.shift];
  const dots = new Int32Array(copy.memory.buffer, args[4], count);
  const query = { scale: floats[0], residual: floats[1], length: floats[2] };
  const sums = shift ? { sums: copy.bounds.sums, shift } : {};
  const kept = rank.candidates(dots, copy.bounds, query, count, state[AT.k], { from, ...sums }).rows;
  new Int32Array(copy.memory.buffer, state[AT.kept] + 4 * from, kept.length).set(kept);
  state[AT.result] = kept.length;
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
