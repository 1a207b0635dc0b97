// Explore on Trino, in one run: the time the service adds on top of Trino for the same statements.
//   peer:  each statement run directly with trino-client, as the same user with the same token;
//   svc:   POST /query (force, a scripted model that answers with that statement) on the Trino engine: policy,
//          validation, the cost gate (a bound from table statistics cached per table; an EXPLAIN round trip only
//          when the bound is above the limit), execution, redaction, publishing.
// The EXPLAIN (TYPE IO) row times the round trip the gate used to make on every statement, for reference.
// svc's own time is its request's time less the time spent inside the Trino engine's calls (the plan's read check and
// the execution, and an estimate when the gate needs one): what svc adds besides waiting on Trino. The scripted
// model's HTTP round trip is part of it; its own row prints it, for information. Each question names what its
// statement reads (statements.ts), so the catalog search finds those tables, as a user's question would.
// The two are interleaved so that Trino's warm-up and drift hit both alike. svc keeps its own rows (audit, limits,
// dashboards, sessions) in the real Postgres that scripts/start-trino.sh starts, as a deployment on Trino does; an
// in-process PGlite would charge its wasm to svc's own time.
// With --steps, where the own time goes, for information: each pipeline step's span (tracing on, its spans kept
// in-process, which adds about 0.1 ms a question) less the engine's and the model's calls inside it, the limiter's
// charges, the audit record's statement, and what is left outside the steps (the route, identity, body, response).
// Run: npx tsx bench/explore/trino.ts [--iterations 40] [--steps]   (starts Trino with scripts/start-trino.sh)
import { loadavg } from 'node:os';
import { Trino } from 'trino-client';
import { pino } from 'pino';
import { as, exploreHarness } from '../../tests/support/explore.ts';
import { QUESTIONS, STATEMENTS } from './statements.ts';
import { startScriptedGateway } from '../../tests/support/scripted-gateway.ts';
import { ensureTrino, serviceTrinoEngine, trinoToken, TRINO_URL } from '../../tests/support/trino.ts';
import { openFreshPostgres } from '../../tests/support/pg.ts';
import { stepTimer } from './steps.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('iterations', '40'));
const steps = process.argv.includes('--steps') ? stepTimer() : undefined;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(1).padStart(8)} ms`;

// One client per user, kept, its agent kept alive (trino-client's `ssl` options go to its https.Agent): its
// connections stay open between statements and pages, as svc's engine keeps its own (a client made per statement, or
// an agent without keep-alive, pays a TLS handshake each time, which would flatter svc).
const clients = new Map<string, Trino>();
async function direct(sql: string, user: string, token: string, ca: string): Promise<number> {
  let client = clients.get(`${user} ${token}`);
  if (!client) {
    const agentOptions = { ca, keepAlive: true }; // typed as TLS options only, but handed to the Agent whole
    client = Trino.create({
      server: TRINO_URL,
      ssl: agentOptions,
      extraHeaders: { Authorization: `Bearer ${token}`, 'X-Trino-User': user },
    });
    clients.set(`${user} ${token}`, client);
  }
  let rows = 0;
  for await (const page of await client.query(sql)) {
    if (page.error) throw new Error(page.error.message);
    rows += page.data?.length ?? 0;
  }
  return rows;
}

async function main() {
  const { ca } = ensureTrino();
  const who = as.analyst2; // no row filter: both paths read the same rows
  const token = await trinoToken(who.user);
  let answer = '';
  const gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => answer });
  const trino = await serviceTrinoEngine(ca);
  // time inside the engine's calls, summed per request: the rest of svc's time is its own
  let inEngine = 0;
  const timed =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const t = performance.now();
      try {
        return await call(...args);
      } finally {
        inEngine += performance.now() - t;
        steps?.interval('engine', t, performance.now());
      }
    };
  const engine: typeof trino = {
    kind: trino.kind,
    columns: timed(trino.columns.bind(trino)),
    estimateBytes: timed(trino.estimateBytes.bind(trino)),
    scanBound: timed(trino.scanBound.bind(trino)),
    execute: timed(trino.execute.bind(trino)),
    close: () => trino.close(),
  };
  // the cost gate's audit events say where each estimate came from (statistics or EXPLAIN)
  const gateEvents: string[] = [];
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        // only the gate's lines are parsed: the bench's own work stays out of svc's time
        if (!recording || !line.includes('"explore_cost_gate"')) return;
        gateEvents.push((JSON.parse(line) as { source?: string }).source ?? '?');
      },
    },
  );
  let recording = false;
  const platform = await openFreshPostgres('bench_explore_trino');
  const h = await exploreHarness(
    { SVC_LLM_URL: gw.url },
    { engine, tokens: { [who.user]: token }, logger, conformance: false, db: platform.db },
  );

  // the scripted model's round trip (in svc's own time), for information
  let inModel = 0;
  const chat = h.deps.chat!;
  const complete = chat.complete.bind(chat);
  chat.complete = async (req) => {
    const t = performance.now();
    try {
      return await complete(req);
    } finally {
      inModel += performance.now() - t;
      steps?.interval('model', t, performance.now());
    }
  };
  steps?.watch(h.deps);
  const peer: number[] = [];
  const explain: number[] = [];
  const svc: number[] = [];
  const own: number[] = [];
  const model: number[] = [];
  for (let i = -5; i < N; i++) {
    for (const sql of STATEMENTS) {
      const t0 = performance.now();
      await direct(sql, who.user, token, ca);
      const te = performance.now();
      await direct(`EXPLAIN (TYPE IO, FORMAT JSON) ${sql}`, who.user, token, ca);
      const t1 = performance.now();
      answer = `\`\`\`sql\n${sql}\n\`\`\``;
      recording = i >= 0;
      inEngine = 0;
      inModel = 0;
      const res = await h.ask(who, { question: `${QUESTIONS[STATEMENTS.indexOf(sql)]} (${i})`, force: true });
      const t2 = performance.now();
      steps?.request(t1, t2, i >= 0);
      if (res.status !== 200) throw new Error(`svc answered ${res.status}: ${JSON.stringify(res.body)}`);
      if (i >= 0) {
        peer.push(te - t0);
        explain.push(t1 - te);
        svc.push(t2 - t1);
        own.push(t2 - t1 - inEngine);
        model.push(inModel);
      }
    }
  }

  console.log(`\nexplore on Trino 476, ${N} rounds of ${STATEMENTS.length} statements (user ${who.user}, tpch.tiny)`);
  console.log(' path                                |         p50 |         p99');
  console.log(` ${'trino-client directly (peer)'.padEnd(35)} | ${ms(pct(peer, 50))} | ${ms(pct(peer, 99))}`);
  console.log(` ${'EXPLAIN (TYPE IO) directly'.padEnd(35)} | ${ms(pct(explain, 50))} | ${ms(pct(explain, 99))}`);
  console.log(` ${'svc POST /query'.padEnd(35)} | ${ms(pct(svc, 50))} | ${ms(pct(svc, 99))}`);
  const added = svc.map((x, i) => x - peer[i]!);
  console.log(` ${'added by svc (paired difference)'.padEnd(35)} | ${ms(pct(added, 50))} | ${ms(pct(added, 99))}`);
  console.log(` ${"svc's own time (not in Trino calls)".padEnd(35)} | ${ms(pct(own, 50))} | ${ms(pct(own, 99))}  (goal p50 <= 3 ms)`);
  console.log(
    ` ${"  of which the model's round trip".padEnd(35)} | ${ms(pct(model, 50))} | ${ms(pct(model, 99))}  (scripted gateway, for information)`,
  );
  steps?.print();
  const sources = new Map<string, number>();
  for (const e of gateEvents) sources.set(e, (sources.get(e) ?? 0) + 1);
  console.log(` cost gate answers: ${[...sources].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  console.log(
    ` ratio svc / direct p50: ${(pct(svc, 50) / pct(peer, 50)).toFixed(2)}x (goal <= 1.10x); load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  await h.close();
  await gw.close();
  await platform.cleanup();
}

await main();
