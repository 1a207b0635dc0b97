// A worker of split.ts (plain JavaScript, so the thread starts the same under Node, tsx and vitest; blocks.ts, the
// blocks' pass and selection this thread shares with the caller, is loaded by import-ts.mjs). It instantiates
// the kernel on each shared memory it is handed, then sleeps on its control word and, woken for a pass, takes its
// blocks from the shared counter until none is left: each one's pass, then its selection. A memory it is told to forget is dropped and collected at once: V8 frees a shared
// memory only once every thread that held it has collected (see split-release.ts).
import { receiveMessageOnPort, workerData } from 'node:worker_threads';
import { importTypeScript } from './import-ts.mjs';

const blocks = await importTypeScript(new URL('./blocks.ts', import.meta.url).href);

const { modules, control, port } = workerData;
// the control word's states, layout and the kernel's functions, as split.ts writes them
const { IDLE, MAIL, JOB, DONE, FAILED, AT, CONTROL_INTS, FUNCTIONS } = await importTypeScript(
  new URL('./split-control.ts', import.meta.url).href,
);

const state = new Int32Array(control, 0, CONTROL_INTS);
const floats = new Float64Array(control, 4 * CONTROL_INTS, 3);
/** The kernel on each memory, with the memory, its store's bounds and work words, by the memory's id. */
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
    const { attach, memory, bounds, work, forget } = m.message;
    if (attach !== undefined) held.set(attach, { memory, bounds, work, kernel: held.get(attach)?.kernel ?? instantiate(memory) });
    if (forget !== undefined) forgot = held.delete(forget) || forgot;
  }
  if (forgot && typeof globalThis.gc === 'function') globalThis.gc();
}

const asleep = new Int32Array(new SharedArrayBuffer(4));

/** Takes blocks of the pass in the control word until none is left (blocks.ts); answers how many. */
function run() {
  // the generation first (split.ts writes it last): what is read after it is its pass's or a later one's, and a
  // later one's is never run with it (no block of a later pass can be taken with this generation)
  const generation = Atomics.load(state, AT.generation);
  readMail(); // a memory posted for this pass is in the mail by now
  const copy = held.get(state[AT.id]);
  const name = FUNCTIONS[state[AT.fn]];
  const fn = copy?.kernel[name];
  if (!fn) {
    if (Atomics.load(state, AT.generation) !== generation) return 0; // taken back and armed again meanwhile
    throw new Error(`no kernel function ${state[AT.fn]} for memory ${state[AT.id]}`);
  }
  const [query, rows, groups, stride, out] = state.slice(AT.args, AT.args + 5);
  const select = state[AT.select]
    ? {
        query: { scale: floats[0], residual: floats[1], length: floats[2] },
        count: state[AT.count],
        k: state[AT.k],
        shift: state[AT.shift],
        sums: state[AT.sums],
        kept: state[AT.kept],
        bounds: state[AT.bounds],
      }
    : undefined;
  const pass = {
    fn,
    above: copy.kernel.above,
    read: name === 'read',
    query,
    rows,
    groups,
    stride,
    out,
    blockGroups: state[AT.blockGroups],
    blocks: state[AT.blocks],
    generation,
    select,
  };
  let stall = state[AT.stall]; // tests: a worker the scheduler serves late, holding its first block
  const claimed = () => {
    if (stall > 0) Atomics.wait(asleep, 0, 0, stall);
    stall = 0;
  };
  return blocks.passBlocks(pass, copy.memory, copy.bounds, copy.work, () => Atomics.load(state, 0) === JOB, claimed);
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
      state[AT.result] = run();
    } catch {
      outcome = FAILED; // the caller passes the block it held itself
    }
    Atomics.compareExchange(state, 0, JOB, outcome);
    Atomics.notify(state, 0);
    // a memory forgotten while this thread was still on its pass (the caller need not wait for it) is let go now
    readMail();
  } else break; // abandoned: the caller gave up waiting and no longer reads what this thread writes
}
