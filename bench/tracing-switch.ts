// Tracing off and on in one process, for the benches that print what tracing costs a request (issue 37). On is what
// SVC_TRACING_ENABLED=true starts (src/platform/tracing-export.ts): spans recorded on the request's path, handed in
// batches to the export worker thread, whose OpenTelemetry batch processor and OTLP/HTTP exporter send them to a
// receiver in a process of its own that answers as the tracker does and counts the spans; the export's own work
// (serialising and posting) is in the process's CPU time, reading it is not. Off is no sink: every span function just runs its work. Switch only between
// requests.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { exportSpansTo, exportWorker, flushSpans, tracingMetrics } from '../src/platform/tracing-export.ts';

// The receiver reads each export whole and counts its spans by their "spanId" keys (a parent's is
// "parentSpanId"), without parsing the JSON: it stands in for a tracker on another machine, whose work is not the
// service's, and parsing at the lowest priority on two busy cores it fell behind until the exporter gave up on spans.
const RECEIVER = `
  let spans = 0;
  require('node:http').createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      if (req.method === 'GET') return res.end(String(spans));
      const body = Buffer.concat(chunks);
      for (let at = body.indexOf('"spanId":'); at >= 0; at = body.indexOf('"spanId":', at + 9)) spans++;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

export type TracingSwitch = {
  set(on: boolean): void;
  /** Flushes what is queued and says how many spans the receiver has read. */
  exported(): Promise<number>;
  /** Spans the export gave up on so far (svc_trace_spans_exported_total{outcome="dropped"}): a slow receiver's. */
  dropped(): Promise<number>;
  close(): Promise<void>;
};

export async function tracingSwitch(service: string): Promise<TracingSwitch> {
  const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  // it stands in for a tracker on another machine: at the lowest priority, it does not take the measured cores
  if (receiver.pid) setPriority(receiver.pid, 19);
  const url = await new Promise<string>((resolve) => receiver.stdout.once('data', (d) => resolve(`http://127.0.0.1:${String(d).trim()}`)));
  const sink = exportWorker({ serviceName: service, url: `${url}/v1/traces`, headers: { 'x-mlflow-experiment-id': '0' } });
  const set = (on: boolean) => exportSpansTo(on ? sink : undefined);
  return {
    set,
    async exported() {
      // a batch refused (the exporter's limit of exports in flight, in a burst) is lost, as in a service: not fatal
      await flushSpans();
      return Number(await (await fetch(url)).text());
    },
    async dropped() {
      return Number(/outcome="dropped"\} (\d+)/.exec(await tracingMetrics())?.[1] ?? 0);
    },
    async close() {
      exportSpansTo(undefined);
      await sink.close();
      receiver.kill();
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p50 = (xs: Float64Array) => xs.sort()[Math.floor(xs.length / 2)]!;

/**
 * The median of paired differences (on - off, one per pair of turns), with its 95% interval from resampling the
 * pairs 2000 times (a bootstrap): how far the figure could move on another run of the same machine.
 */
export function pairedCost(differences: number[]): { median: number; low: number; high: number } {
  const resampled: number[] = [];
  for (let r = 0; r < 2000; r++) {
    resampled.push(median(differences.map(() => differences[Math.floor(Math.random() * differences.length)]!)));
  }
  resampled.sort((a, b) => a - b);
  return { median: median(differences), low: resampled[49]!, high: resampled[1949]! };
}

/** A pair of blocks of requests, one with tracing off and one on, run one after the other: their times. */
export type PairOfBlocks = { off: number[]; on: number[] };

/**
 * What the goal names: the p50 of every request with tracing on minus that of every request with it off, with its
 * 95% interval from resampling the pairs of blocks 2000 times (a pair's two blocks kept together, so that load
 * drifting over the run moves both sides of each resample alike). Printed beside pairedCost's median over the pairs:
 * on the busy machine of 2026-11-29 either interval was the narrower one in some run.
 */
export function pooledCost(pairs: PairOfBlocks[]): { cost: number; low: number; high: number } {
  const size = (side: 'off' | 'on', chosen: PairOfBlocks[]) => chosen.reduce((n, p) => n + p[side].length, 0);
  const difference = (chosen: PairOfBlocks[]) => {
    const off = new Float64Array(size('off', chosen));
    const on = new Float64Array(size('on', chosen));
    let [i, j] = [0, 0];
    for (const p of chosen) {
      off.set(p.off, i);
      on.set(p.on, j);
      i += p.off.length;
      j += p.on.length;
    }
    return p50(on) - p50(off);
  };
  const resampled: number[] = [];
  for (let r = 0; r < 2000; r++) resampled.push(difference(pairs.map(() => pairs[Math.floor(Math.random() * pairs.length)]!)));
  resampled.sort((a, b) => a - b);
  return { cost: difference(pairs), low: resampled[49]!, high: resampled[1949]! };
}
