// The chart worker: draws a page's chart (chart-draw.mjs) off the thread that answers HTTP, one job at a time, so
// ten milliseconds of ECharts do not stall the next request. chart-svg.ts starts it on the first chart and ends it
// once idle. A job that throws answers with its message; the job's page is then refused with it.
import { parentPort } from 'node:worker_threads';
import { drawChart } from './chart-draw.mjs';

parentPort?.on('message', async (/** @type {{ job: number, chart: any, columns: any[], rows: unknown[][], total: number }} */ m) => {
  try {
    parentPort?.postMessage({ job: m.job, svg: await drawChart(m.chart, m.columns, m.rows, m.total) });
  } catch (err) {
    parentPort?.postMessage({ job: m.job, error: err instanceof Error ? err.message : String(err) });
  }
});
