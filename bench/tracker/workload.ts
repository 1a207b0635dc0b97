// The tracker benches' requests, as the official Python client sends them (paths, JSON bodies and headers from
// mlflow's rest_store): used by bench/tracker/index.ts (svc against MLflow) and search-profile.ts (svc alone).

import { Agent, request as httpRequest } from 'node:http';

export const MLFLOW_VERSION = '3.17.2';
export const HEADERS = { 'Content-Type': 'application/json', 'User-Agent': `mlflow-python-client/${MLFLOW_VERSION}` };

export type Phase = { name: string; requests: number; seconds: number; latencies: number[] };

// node:http with kept-alive sockets: the driver shares the two cores with the servers it measures, and fetch's
// streams cost it about twice the CPU a request (the same driver for every server).
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One request; the answer's status and text. */
export function request(
  url: string,
  method: string,
  body?: string,
  headers: Record<string, string> = HEADERS,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, agent, headers: body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A call's answer as text (anything but a 2xx throws). */
export async function callText(base: string, method: 'GET' | 'POST', path: string, body: unknown): Promise<string> {
  const url = `${base}/api/2.0/mlflow/${path}`;
  const res = await request(
    method === 'GET' ? `${url}?${new URLSearchParams(body as Record<string, string>)}` : url,
    method,
    method === 'POST' ? JSON.stringify(body) : undefined,
  );
  if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path} -> ${res.status} ${res.text.slice(0, 300)}`);
  return res.text;
}

export async function call(base: string, method: 'GET' | 'POST', path: string, body: unknown): Promise<any> {
  return JSON.parse(await callText(base, method, path, body));
}

/**
 * The runs in a runs/search answer, counted without parsing it (parsing 100 runs, about 150 KB, costs the driver
 * about 1 ms a search): each run's info has one run_uuid member, in svc's compact JSON and MLflow's alike.
 */
export const countRuns = (text: string): number => text.match(/"run_uuid":\s*"/g)?.length ?? 0;

/** Runs `count` requests, `concurrency` at a time; each one's latency in ms. */
export async function phase(name: string, count: number, concurrency: number, one: (i: number) => Promise<unknown>): Promise<Phase> {
  const latencies: number[] = new Array(count);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) {
        const s = performance.now();
        await one(i);
        latencies[i] = performance.now() - s;
      }
    }),
  );
  return { name, requests: count, seconds: (performance.now() - t0) / 1000, latencies };
}

/** Run i's acc: a permutation of i over `runs` (the same on every server), so the order is total. */
export const accOf = (i: number, runs: number) => ((i * 7919) % runs) / runs;

export const createRunBody = (experimentId: string, i: number, now: number) => {
  const runName = `run-${String(i).padStart(5, '0')}`;
  return {
    experiment_id: experimentId,
    user_id: 'bench',
    run_name: runName,
    start_time: now + i,
    tags: [
      { key: 'mlflow.user', value: 'bench' },
      { key: 'mlflow.source.name', value: 'bench.py' },
      { key: 'mlflow.source.type', value: 'LOCAL' },
      { key: 'mlflow.runName', value: runName },
    ],
  };
};

/** Run i's batch: 10 metrics, 5 params, 2 tags. */
export const logBatchBody = (runId: string, i: number, runs: number, now: number) => ({
  run_id: runId,
  metrics: [
    { key: 'acc', value: accOf(i, runs), timestamp: now + i, step: 0 },
    { key: 'loss', value: 1 - accOf(i, runs), timestamp: now + i, step: 0 },
    ...Array.from({ length: 8 }, (_, k) => ({ key: `m${k}`, value: (i % 97) + k, timestamp: now + i, step: 0 })),
  ],
  params: [
    { key: 'kind', value: i % 2 ? 'b' : 'a' },
    { key: 'lr', value: String(0.001 * (1 + (i % 10))) },
    { key: 'layers', value: String(1 + (i % 5)) },
    { key: 'optimizer', value: i % 3 ? 'adam' : 'sgd' },
    { key: 'seed', value: String(i) },
  ],
  tags: [
    { key: 'group', value: `g${i % 10}` },
    { key: 'bench', value: 'yes' },
  ],
});

/** Search i: the top 100 by acc or by loss, every fourth one with a filter on a metric and a param. */
export const searchBody = (experimentId: string, i: number) => ({
  experiment_ids: [experimentId],
  run_view_type: 'ACTIVE_ONLY',
  max_results: 100,
  order_by: [i % 2 ? 'metrics.loss ASC' : 'metrics.acc DESC'],
  ...(i % 4 === 3 ? { filter: "metrics.acc > 0.5 and params.kind = 'a'" } : {}),
});

/** An experiment named `name` with `runs` runs, each with its batch logged; its id. */
export async function seedRuns(base: string, name: string, runs: number, concurrency: number): Promise<string> {
  const { experiment_id: experimentId } = await call(base, 'POST', 'experiments/create', { name });
  const now = Date.now();
  const runIds: string[] = new Array(runs);
  await phase('create run', runs, concurrency, async (i) => {
    runIds[i] = (await call(base, 'POST', 'runs/create', createRunBody(experimentId, i, now))).run.info.run_id;
  });
  await phase('log batch', runs, concurrency, (i) => call(base, 'POST', 'runs/log-batch', logBatchBody(runIds[i]!, i, runs, now)));
  return experimentId;
}
