import { Worker } from 'node:worker_threads';
import { MAX_CHART_POINTS, chartOption } from './chart-draw.mjs';
import type { ChartSpec, Column } from './chart.ts';

// A page's chart is drawn by ECharts (chart-draw.mjs) in a worker thread: about ten milliseconds of CPU a chart, which
// on the thread that answers HTTP would stall every request behind it. The worker starts on the first chart (ECharts
// is loaded there, not when explore starts) and ends after IDLE_MS without one, so an idle explore holds neither.
export const IDLE_MS = 30_000;
export const CHART_WORKER = new URL('./chart-worker.mjs', import.meta.url);

export type ChartDrawer = {
  /** The chart as safe SVG markup for the page, or '' for a table (or a chart whose columns are not in the result). */
  draw(chart: ChartSpec, columns: Column[], rows: unknown[][]): Promise<string>;
  /** Ends the worker; a chart asked for later starts another. */
  close(): Promise<void>;
};

type Job = { resolve(svg: string): void; reject(err: Error): void };
type Answer = { job: number; svg?: string; error?: string };

export function createChartDrawer(opts: { worker?: URL; idleMs?: number } = {}): ChartDrawer {
  const idleMs = opts.idleMs ?? IDLE_MS;
  const jobs = new Map<number, Job>();
  let worker: Worker | undefined;
  let idle: NodeJS.Timeout | undefined;
  let last = 0;

  const settle = (job: number, outcome: { svg: string } | { error: Error }) => {
    const waiting = jobs.get(job);
    jobs.delete(job);
    if (jobs.size === 0 && worker) {
      worker.unref(); // an idle worker never holds the process open
      idle = setTimeout(() => void stop(), idleMs).unref();
    }
    if (waiting) 'svg' in outcome ? waiting.resolve(outcome.svg) : waiting.reject(outcome.error);
  };
  // The worker stopped (a crash, or ended when idle): every job it held fails with why, and the next starts another.
  const lost = (w: Worker, why: string) => {
    if (worker !== w) return;
    worker = undefined;
    for (const job of [...jobs.keys()]) settle(job, { error: new Error(`the chart worker stopped: ${why}`) });
  };
  const start = () => {
    const w = new Worker(opts.worker ?? CHART_WORKER);
    w.on('message', (m: Answer) => settle(m.job, m.error === undefined ? { svg: m.svg ?? '' } : { error: new Error(m.error) }));
    w.on('error', (err) => lost(w, err.message));
    w.on('exit', (code) => lost(w, `it exited with code ${code}`));
    return w;
  };
  const stop = async () => {
    clearTimeout(idle);
    const w = worker;
    worker = undefined;
    for (const job of [...jobs.keys()]) settle(job, { error: new Error('the chart worker was stopped (explore is closing)') });
    await w?.terminate();
  };

  return {
    async draw(chart, columns, rows) {
      // a table, or nothing to draw: no worker for it
      if (!chartOption(chart, columns, rows.slice(0, 1))) return '';
      clearTimeout(idle);
      worker ??= start();
      worker.ref();
      const job = ++last;
      const drawn = new Promise<string>((resolve, reject) => jobs.set(job, { resolve, reject }));
      // only the rows the chart shows cross to the worker
      worker.postMessage({ job, chart, columns, rows: rows.slice(0, MAX_CHART_POINTS), total: rows.length });
      return drawn;
    },
    close: stop,
  };
}
