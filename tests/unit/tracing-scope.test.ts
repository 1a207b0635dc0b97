import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inRequest } from '../../src/platform/request-scope.ts';
import { exportSpansTo, exportWorker, flushSpans, type Sink } from '../../src/platform/tracing-export.ts';
import { describeSpan, inRequestTrace, inSpan, inTracedSpan, tracer } from '../../src/platform/tracing.ts';

// A request's trace lives in the request's own scope (request-scope.ts), not a context of its own: requests running
// at once keep their traces apart, steps nest, work outside any request still gets a trace of its own. Inputs and
// outputs are serialised by the export worker, so a value JSON cannot write as such never fails the request.
type OtlpSpan = {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: number | string } }[];
};
type Export = { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };

const attribute = (s: OtlpSpan | undefined, key: string) => {
  const v = s?.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? v?.intValue;
};
const steps = tracer('test');
const pause = () => new Promise((r) => setTimeout(r, 1));

describe('tracing in the request scope', () => {
  let receiver: Server;
  let sink: Sink;
  const spans: OtlpSpan[] = [];
  const named = (name: string) => spans.filter((s) => s.name === name);
  const byId = (id: string | undefined) => spans.find((s) => s.spanId === id);

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        for (const r of (JSON.parse(body) as Export).resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    sink = exportWorker({ serviceName: 'test', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces` });
    exportSpansTo(sink);
  });

  afterAll(async () => {
    exportSpansTo(undefined);
    await sink?.close();
    receiver?.close();
  });

  it('keeps the traces of requests running at once apart, each step under its own request', async () => {
    const request = (id: string) =>
      inRequest(id, () =>
        inRequestTrace(
          steps,
          'test.request',
          { user: 'ana', requestId: id },
          { id },
          async () => {
            for (const step of ['first', 'second']) {
              await inSpan(steps, `test.${step}`, async () => {
                await pause();
                await inTracedSpan(steps, 'test.model', async () => pause());
              });
            }
            return id;
          },
          (answered) => ({ answered }),
        ),
      );
    expect(await Promise.all([request('r-1'), request('r-2')])).toEqual(['r-1', 'r-2']);
    await flushSpans();

    for (const id of ['r-1', 'r-2']) {
      const root = named('test.request').find((s) => attribute(s, 'svc.request_id') === id)!;
      expect(root.parentSpanId ?? '').toBe('');
      expect(attribute(root, 'user.id')).toBe('ana');
      expect(attribute(root, 'mlflow.spanInputs')).toBe(JSON.stringify({ id }));
      expect(attribute(root, 'mlflow.spanOutputs')).toBe(JSON.stringify({ answered: id }));
      const stepsOf = spans.filter((s) => s.name.startsWith('test.') && s.name !== 'test.request' && s.traceId === root.traceId);
      expect(stepsOf.map((s) => s.name).sort()).toEqual(['test.first', 'test.model', 'test.model', 'test.second']);
      for (const model of stepsOf.filter((s) => s.name === 'test.model')) {
        expect(['test.first', 'test.second']).toContain(byId(model.parentSpanId)?.name);
      }
      for (const step of stepsOf.filter((s) => s.name !== 'test.model')) expect(step.parentSpanId).toBe(root.spanId);
    }
  });

  it('gives a span outside any request a trace of its own, and a model call outside any trace none', async () => {
    spans.length = 0;
    await inTracedSpan(steps, 'test.untraced', async () => pause());
    await inRequest('r-3', () => inTracedSpan(steps, 'test.untraced', async () => pause()));
    await inSpan(steps, 'test.job', async () => inSpan(steps, 'test.job-step', async () => pause()));
    await flushSpans();
    expect(named('test.untraced')).toEqual([]);
    const [job] = named('test.job');
    expect(job!.parentSpanId ?? '').toBe('');
    expect(byId(named('test.job-step')[0]!.parentSpanId)).toBe(job);
  });

  it('writes inputs JSON has no plain form for without failing the request', async () => {
    spans.length = 0;
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle.self = cycle;
    const answered = await inRequest('r-4', () =>
      inRequestTrace(
        steps,
        'test.odd',
        { user: 'ana', requestId: 'r-4' },
        { question: 'odd values' },
        async () => {
          await inSpan(steps, 'test.bigint', async (span) => describeSpan(span, { inputs: { rows: 12n } }));
          await inSpan(steps, 'test.cycle', async (span) => describeSpan(span, { inputs: cycle }));
          await flushSpans(); // these two written by the worker
          // a function cannot be handed to the worker: this batch is written as JSON on the request's thread
          await inSpan(steps, 'test.function', async (span) => describeSpan(span, { outputs: { kept: 13n, dropped: () => 1 } }));
          return 'ok';
        },
        () => ({ done: true }),
      ),
    );
    expect(answered).toBe('ok');
    await flushSpans();
    expect(attribute(named('test.bigint')[0], 'mlflow.spanInputs')).toBe('{"rows":"12"}');
    expect(attribute(named('test.cycle')[0], 'mlflow.spanInputs')).toMatch(/^"not serialisable: /);
    expect(attribute(named('test.function')[0], 'mlflow.spanOutputs')).toBe('{"kept":"13"}');
    expect(attribute(named('test.odd')[0], 'mlflow.spanOutputs')).toBe('{"done":true}');
  });
});
