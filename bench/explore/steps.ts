// Where a question's own time goes, for bench/explore/trino.ts --steps (information, not a goal): tracing is turned
// on with a sink that keeps the spans in-process (about 0.1 ms a question more), and the bench marks the engine's and
// the model's calls; the limiter's charges, the policy's decisions and the database's statements are timed here. Per
// request: each step's span less the engine's and the model's calls inside it; the charges; what else runs inside the
// question's trace outside the steps; and outside the trace, the audit record's statement and the rest (the route,
// identity, body, response, the request's log line and metrics).
import type { ExploreDeps } from '../../src/explore/deps.ts';
import { exportSpansTo, flushSpans, SPAN_FIELDS } from '../../src/platform/tracing-export.ts';

type Span = { name: string; start: number; end: number };
type Interval = { kind: string; start: number; end: number };

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

export function stepTimer() {
  let spans: Span[] = [];
  let intervals: Interval[] = [];
  const parts = new Map<string, number[]>();
  const add = (name: string, v: number) => {
    if (!parts.has(name)) parts.set(name, []);
    parts.get(name)!.push(v);
  };
  exportSpansTo({
    send(batch) {
      for (let i = 0; i < batch.spans.length; i += SPAN_FIELDS)
        spans.push({ name: batch.spans[i] as string, start: batch.spans[i + 5] as number, end: batch.spans[i + 6] as number });
    },
    flush: async () => {},
    close: async () => {},
  });
  const interval = (kind: string, start: number, end: number) => intervals.push({ kind, start, end });
  const timed =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>, kind: (...args: NoInfer<A>) => string) =>
    async (...args: A): Promise<R> => {
      const t = performance.now();
      try {
        return await call(...args);
      } finally {
        interval(kind(...args), t, performance.now());
      }
    };
  const within = (kind: string, from: number, to: number) =>
    intervals.filter((x) => x.kind === kind).reduce((sum, x) => sum + Math.max(0, Math.min(to, x.end) - Math.max(from, x.start)), 0);
  return {
    interval,
    /** Times the limiter's charges, the policy's decisions and the database's statements (the audit record's by its text). */
    watch(deps: ExploreDeps) {
      deps.limiter.charge = timed(deps.limiter.charge.bind(deps.limiter), () => 'charge');
      deps.policy.decide = timed(deps.policy.decide.bind(deps.policy), (...[name]) => `decide ${name}`);
      deps.db.query = timed(deps.db.query.bind(deps.db), (...[text]) =>
        text.includes('audit_head') ? 'audit' : 'db',
      ) as typeof deps.db.query;
    },
    /** One request from t1 to t2, kept when `keep` (not a warm-up). */
    request(t1: number, t2: number, keep: boolean) {
      void flushSpans();
      const root = spans.find((s) => s.name === 'explore.query');
      if (keep && root) {
        let inSteps = 0;
        for (const s of spans) {
          if (s.name === 'explore.query' || !s.name.startsWith('explore.')) continue;
          const d = s.end - s.start;
          inSteps += d;
          add(`step ${s.name.slice('explore.'.length)}`, d - within('engine', s.start, s.end) - within('model', s.start, s.end));
        }
        const charges = within('charge', root.start, root.end);
        add('limiter charges (2)', charges);
        add('model round trip', within('model', t1, t2));
        add('policy decisions, summed (tables)', within('decide tables', t1, t2));
        add('policy decisions, summed (limits)', within('decide limits', t1, t2));
        add('trace, outside steps and charges', root.end - root.start - inSteps - charges);
        add('before the trace (route, identity, body)', root.start - t1);
        const audit = within('audit', root.end, t2);
        add('audit record statement', audit);
        add('after the trace, less the audit record', t2 - root.end - audit);
        add('other db statements (whole request)', within('db', t1, t2));
        add('own time', t2 - t1 - within('engine', t1, t2));
      }
      spans = [];
      intervals = [];
    },
    print() {
      console.log('\n where the own time goes (--steps; tracing on adds ~0.1 ms)  |  p50 ms |  mean ms');
      for (const [name, xs] of parts)
        console.log(`   ${name.padEnd(58)} | ${pct(xs, 50).toFixed(2).padStart(7)} | ${mean(xs).toFixed(2).padStart(8)}`);
    },
  };
}
