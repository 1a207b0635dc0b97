// Where an upload's work goes (issue 36): ten-page PDFs (the LangChain bench's) uploaded one after another to svc's
// app on real Postgres, each statement counted with the bytes it sent (parameters as text, COPY input as sent) and
// its time, and the CPU each thread of the process and each Postgres backend of the database spent an upload; then
// the same files again, each a duplicate (answered after the content lookup), for what receiving and admitting one
// costs. CPU, unlike wall time, is not what other processes on the machine make it. `--profile <file>` writes a CPU
// profile of the main thread over the timed uploads (a busy machine charges the time a thread waited for a core to
// whatever native call it was in: socket writes and postMessage look dearer than they are).
// Run: npx tsx bench/retrieval/upload-profile.ts [--docs 200] [--profile main.cpuprofile]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { openPostgres, type Sql } from '../../src/platform/db/index.ts';
import { freshDatabase } from '../../tests/support/pg.ts';
import { who } from '../../tests/support/retrieval.ts';
import { tenPageDoc } from './langchain-docs.ts';
import { uploadHarness } from './upload-harness.ts';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const DOCS = Number(arg('docs') ?? 200);
const PROFILE = arg('profile');
const WARM = 30;

type Counted = { n: number; ms: number; bytes: number };
const counted = new Map<string, Counted>();
const count = (what: string, ms: number, bytes: number) => {
  const c = counted.get(what) ?? { n: 0, ms: 0, bytes: 0 };
  c.n++;
  c.ms += ms;
  c.bytes += bytes;
  counted.set(what, c);
};
const label = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 72);
const paramBytes = (params: readonly unknown[] = []) =>
  params.reduce<number>((sum, p) => sum + (p === null || p === undefined ? 0 : Buffer.byteLength(String(p))), 0);

/** The database (or a transaction) with every statement counted. */
function counting<T extends Sql>(sql: T, prefix: string): T {
  const timed = async <R>(what: string, bytes: () => number, run: () => Promise<R>) => {
    const t = performance.now();
    try {
      return await run();
    } finally {
      count(`${prefix}${what}`, performance.now() - t, bytes());
    }
  };
  return new Proxy(sql, {
    get(target, key) {
      const v = Reflect.get(target, key);
      if (key === 'query')
        return (text: string, params?: readonly unknown[], opts?: unknown) =>
          timed(
            label(text),
            () => paramBytes(params),
            () => (v as (...a: unknown[]) => Promise<unknown>).call(target, text, params, opts),
          );
      if (key === 'copyIn')
        return (into: string, input: Iterable<Uint8Array>) => {
          let sent = 0;
          const measured = (function* () {
            for (const piece of input) {
              sent += piece.length;
              yield piece;
            }
          })();
          return timed(
            `COPY ${label(into).slice(0, 40)}`,
            () => sent,
            () => (v as Sql['copyIn']).call(target, into, measured),
          );
        };
      if (key === 'transaction')
        return (fn: (tx: Sql) => Promise<unknown>) =>
          timed(
            'transaction (BEGIN .. COMMIT)',
            () => 0,
            () => (v as (f: typeof fn) => Promise<unknown>).call(target, (tx: Sql) => fn(counting(tx, '  in it: '))),
          );
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** CPU ticks (user + system, 10 ms each) of each thread of this process by name, and of the given processes. */
function ticks(pids: number[]): Map<string, number> {
  const out = new Map<string, number>();
  const add = (key: string, stat: string) => {
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(key, (out.get(key) ?? 0) + Number(f[11]) + Number(f[12]));
  };
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    add(tid === String(process.pid) ? 'main thread' : `threads ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`, stat);
  }
  for (const pid of pids) {
    try {
      add('Postgres backends', readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      // a backend that ended
    }
  }
  return out;
}
const cpuLines = (before: Map<string, number>, after: Map<string, number>, n: number, what: string) =>
  [...after]
    .map(([key, t]) => [key, ((t - (before.get(key) ?? 0)) * 10) / n] as const)
    .filter(([, ms]) => ms >= 0.05)
    .map(([key, ms]) => `  CPU ${ms.toFixed(2).padStart(6)} ms ${what}  ${key}`);

const fresh = await freshDatabase('bench_upload_profile');
const raw = openPostgres(fresh.cfg);
try {
  const h = await uploadHarness(counting(raw, ''));
  await h.json('POST', '/collections', who.engineer, { slug: 'profile', name: 'profile', allowed_roles: [] });
  const docs = Array.from({ length: WARM + DOCS }, (_, d) => tenPageDoc(d));
  const upload = async (d: number, status: number) => {
    const r = await h.upload('profile', who.engineer, { name: `d${d}.pdf`, type: 'application/pdf', bytes: docs[d]!.bytes });
    if (r.status !== status) throw new Error(JSON.stringify(r.body));
  };
  for (let d = 0; d < WARM; d++) await upload(d, 201);
  counted.clear();
  const backends = (await raw.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)).map(
    (r) => r.pid,
  );
  const session = PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const load = loadavg()[0]!;
  const before = ticks(backends);
  const each: number[] = [];
  const t0 = performance.now();
  for (let d = WARM; d < WARM + DOCS; d++) {
    const t = performance.now();
    await upload(d, 201);
    each.push(performance.now() - t);
  }
  const ms = performance.now() - t0;
  const after = ticks(backends);
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(PROFILE!, JSON.stringify(profile));
    session.disconnect();
  }
  each.sort((a, b) => a - b);
  console.log(
    `${DOCS} ten-page uploads one after another: ${((DOCS * 10) / (ms / 1000)).toFixed(0)} pages/s, p50 ${each[each.length >> 1]!.toFixed(1)} ms; ` +
      `load ${load.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(cpuLines(before, after, DOCS, 'an upload').join('\n'));
  console.log('statements an upload (bytes sent: parameters as text, COPY input as sent):');
  for (const [what, c] of [...counted].sort((a, b) => b[1].ms - a[1].ms))
    console.log(
      `  ${(c.n / DOCS).toFixed(2).padStart(5)} x ${(c.ms / c.n).toFixed(2).padStart(6)} ms ${String(Math.round(c.bytes / c.n)).padStart(6)} B  ${what}`,
    );
  const dupBefore = ticks(backends);
  for (let d = WARM; d < WARM + DOCS; d++) await upload(d, 200);
  console.log(`the same files again, each a duplicate:\n${cpuLines(dupBefore, ticks(backends), DOCS, 'a duplicate').join('\n')}`);
  await h.close();
} finally {
  await raw.close();
  await fresh.drop();
}
