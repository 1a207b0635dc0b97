// The chart worker: draws a page's chart (chart-draw.mjs) off the thread that answers HTTP, one job at a time, so
// ten milliseconds of ECharts do not stall the next request. chart-svg.ts starts it on the first chart and ends it
// once idle. A job that throws answers with its message; the job's page is then refused with it.
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThisThread } from '../../platform/thread-priority.mjs';
import { drawChart, loadCharts } from './chart-draw.mjs';

// Charts are drawn at a lower CPU priority (nice 10) than the threads that answer HTTP and run the database: questions
// back to back on two busy cores took 1.4 to 1.6 ms p50 to insert their row with the worker at nice 10 or 19, 1.5 to
// 1.9 with no chart drawn at all, and 2 to 7.7 with the worker at nice 0 or 5. Nice 10, not 19: a page someone waits
// for must not starve behind other processes. ECharts is loaded first, at the process's priority: that is the half
// second a first chart costs, and a viewer may be waiting for it. Charts sent meanwhile wait in the port's queue.
await loadCharts();
lowerThisThread(workerData?.nice ?? 10);

parentPort?.on('message', async (/** @type {{ job: number, chart: any, columns: any[], rows: unknown[][], total: number }} */ m) => {
  try {
    parentPort?.postMessage({ job: m.job, svg: await drawChart(m.chart, m.columns, m.rows, m.total) });
  } catch (err) {
    parentPort?.postMessage({ job: m.job, error: err instanceof Error ? err.message : String(err) });
  }
});
