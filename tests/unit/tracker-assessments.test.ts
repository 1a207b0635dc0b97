import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

/** A v3 trace of an experiment, as the client starts it. */
const traceInfo = (exp: string, traceId: string, metadata: Record<string, string> = {}) => ({
  trace_id: traceId,
  trace_location: { type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: exp } },
  request_time: '2026-11-28T10:00:00Z',
  state: 'OK',
  trace_metadata: metadata,
});

// Assessments of a trace through MLflow 3's REST endpoints (the official client's log_feedback, log_expectation,
// get/update/override/delete run in tests/tracker-client/conformance_tracing.py): what the client does not send,
// refused as MLflow's server refuses it.
describe('tracker assessments', () => {
  let t: TrackerHarness;
  let traceId: string;
  let exp: string;
  const base = () => `/api/3.0/mlflow/traces/${traceId}/assessments`;
  const human = { source_type: 'HUMAN', source_id: 'ada' };

  beforeAll(async () => {
    t = await trackerHarness();
    exp = (await t.post('experiments/create', { name: 'assessments' })).body.experiment_id;
    traceId = 'tr-0123456789abcdef0123456789abcdef';
    expect((await t.post('/api/3.0/mlflow/traces', { trace: { trace_info: traceInfo(exp, traceId) } })).status).toBe(200);
  });
  afterAll(async () => t?.close());

  it('keeps any JSON value as sent, lists assessments in the trace, and deletes them with it', async () => {
    const value = { answer: [1, 2.5, 'x'], nested: { ok: true, none: null } };
    const created = await t.post(base(), { assessment: { assessment_name: 'expected', source: human, expectation: { value } } });
    expect(created.status, created.text).toBe(200);
    const id = created.body.assessment.assessment_id;
    expect(id).toMatch(/^a-[0-9a-f]{32}$/);
    expect(created.body.assessment).toMatchObject({ trace_id: traceId, expectation: { value }, source: human, valid: true });
    expect((await t.get(`${base()}/${id}`)).body.assessment.expectation.value).toEqual(value);
    const got = await t.get(`/api/3.0/mlflow/traces/${traceId}`);
    expect(got.body.trace.trace_info.assessments.map((a: { assessment_id: string }) => a.assessment_id)).toContain(id);

    const deleted = await t.post('/api/3.0/mlflow/traces/delete-traces', { experiment_id: exp, request_ids: [traceId] });
    expect(deleted.body.traces_deleted).toBe(1);
    expect((await t.get(`${base()}/${id}`)).body.error_code).toBe('RESOURCE_DOES_NOT_EXIST');
    // the trace again, for the other checks
    expect((await t.post('/api/3.0/mlflow/traces', { trace: { trace_info: traceInfo(exp, traceId) } })).status).toBe(200);
  });

  it('lists assessments logged within one millisecond in the order they were logged', async () => {
    const names = ['expected_quality', 'accuracy', 'clarity', 'helpfulness', 'contains_errors', 'b', 'a'];
    for (const name of names) {
      const res = await t.post(base(), {
        assessment: { assessment_name: name, source: human, feedback: { value: 1 }, create_time: '2026-11-29T01:00:00Z' },
      });
      expect(res.status, res.text).toBe(200);
    }
    const got = await t.get(`/api/3.0/mlflow/traces/${traceId}`);
    const logged = got.body.trace.trace_info.assessments.map((a: { assessment_name: string }) => a.assessment_name);
    expect(logged.filter((n: string) => names.includes(n))).toEqual(names);
  });

  it('refuses an assessment without exactly one of feedback and expectation, or without a name, on a trace that exists', async () => {
    const neither = await t.post(base(), { assessment: { assessment_name: 'x', source: human } });
    expect(neither.status).toBe(400);
    expect(neither.body).toMatchObject({ error_code: 'INVALID_PARAMETER_VALUE', message: expect.stringContaining('exactly one') });
    const both = await t.post(base(), { assessment: { assessment_name: 'x', feedback: { value: 1 }, expectation: { value: 1 } } });
    expect(both.status).toBe(400);
    expect((await t.post(base(), { assessment: { feedback: { value: 1 } } })).body.error_code).toBe('INVALID_PARAMETER_VALUE');
    const missing = await t.post('/api/3.0/mlflow/traces/tr-missing/assessments', {
      assessment: { assessment_name: 'x', feedback: { value: 1 } },
    });
    expect(missing.status).toBe(404);
    const overridesNothing = await t.post(base(), { assessment: { assessment_name: 'x', feedback: { value: 1 }, overrides: 'a-none' } });
    expect(overridesNothing.status).toBe(404);
    expect(overridesNothing.body.message).toContain('a-none');
  });

  it('updates what the mask names, keeps the source, merges metadata, and refuses the other kind', async () => {
    const { body } = await t.post(base(), {
      assessment: { assessment_name: 'correct', source: human, feedback: { value: true }, rationale: 'fine', metadata: { a: '1' } },
    });
    const id = body.assessment.assessment_id;
    const updated = await t.call('PATCH', `${base()}/${id}`, {
      assessment: { feedback: { value: false }, rationale: 'off by one', metadata: { b: '2' }, source: { source_type: 'CODE' } },
      update_mask: 'feedback,rationale,metadata',
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.assessment).toMatchObject({
      feedback: { value: false },
      rationale: 'off by one',
      metadata: { a: '1', b: '2' },
      source: human,
      assessment_name: 'correct',
    });
    // a FieldMask as protobuf's JSON writes it: lowerCamelCase paths
    const renamed = await t.call('PATCH', `${base()}/${id}`, {
      assessment: { assessment_name: 'accurate' },
      update_mask: 'assessmentName',
    });
    expect(renamed.body.assessment.assessment_name).toBe('accurate');
    const wrongKind = await t.call('PATCH', `${base()}/${id}`, { assessment: { expectation: { value: 1 } }, update_mask: 'expectation' });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.message).toContain('Feedback assessment');
    expect((await t.call('PATCH', `${base()}/a-none`, { assessment: {}, update_mask: 'rationale' })).status).toBe(404);
  });

  it('invalidates what an assessment overrides until the override is deleted; deleting twice is no error', async () => {
    const first = (await t.post(base(), { assessment: { assessment_name: 'q', feedback: { value: 1 } } })).body.assessment.assessment_id;
    const second = (await t.post(base(), { assessment: { assessment_name: 'q', feedback: { value: 2 }, overrides: first } })).body
      .assessment;
    expect(second.overrides).toBe(first);
    expect((await t.get(`${base()}/${first}`)).body.assessment.valid).toBe(false);
    expect((await t.call('DELETE', `${base()}/${second.assessment_id}`)).status).toBe(200);
    expect((await t.get(`${base()}/${first}`)).body.assessment.valid).toBe(true);
    expect((await t.call('DELETE', `${base()}/${second.assessment_id}`)).status).toBe(200);
  });
});

// Trace-run links (MLflow's link_traces_to_run; the client's call and search_traces(run_id=…) run in
// conformance_tracing.py): the refusals, and a link that goes with its trace.
describe('tracker trace-run links', () => {
  let t: TrackerHarness;
  let exp: string;
  let runId: string;
  const byRun = async (run: string, op = '=') =>
    t.post('/api/3.0/mlflow/traces/search', {
      locations: [{ type: 'MLFLOW_EXPERIMENT', mlflow_experiment: { experiment_id: exp } }],
      filter: `attribute.run_id ${op} '${run}'`,
    });

  beforeAll(async () => {
    t = await trackerHarness();
    exp = (await t.post('experiments/create', { name: 'links' })).body.experiment_id;
    runId = (await t.post('runs/create', { experiment_id: exp })).body.run.info.run_id;
    for (const id of ['tr-a', 'tr-b', 'tr-c']) await t.post('/api/3.0/mlflow/traces', { trace: { trace_info: traceInfo(exp, id) } });
    await t.post('/api/3.0/mlflow/traces', { trace: { trace_info: traceInfo(exp, 'tr-meta', { 'mlflow.sourceRun': runId }) } });
  });
  afterAll(async () => t?.close());

  it('finds the traces linked to a run and those whose metadata names it; a link goes with its trace', async () => {
    expect((await t.post('traces/link-to-run', { trace_ids: ['tr-a', 'tr-b', 'tr-none'], run_id: runId })).status).toBe(200);
    const found = await byRun(runId);
    expect(found.status, found.text).toBe(200);
    expect(found.body.traces.map((x: { trace_id: string }) => x.trace_id).sort()).toEqual(['tr-a', 'tr-b', 'tr-meta']);
    await t.post('/api/3.0/mlflow/traces/delete-traces', { experiment_id: exp, request_ids: ['tr-a'] });
    expect((await byRun(runId)).body.traces.map((x: { trace_id: string }) => x.trace_id).sort()).toEqual(['tr-b', 'tr-meta']);
  });

  it('refuses more than 100 traces, an unknown run, and a comparison other than =', async () => {
    const many = await t.post('traces/link-to-run', { trace_ids: Array.from({ length: 101 }, (_, i) => `tr-${i}`), run_id: runId });
    expect(many.status).toBe(400);
    expect(many.body.message).toContain('more than 100');
    expect((await t.post('traces/link-to-run', { trace_ids: ['tr-b'], run_id: 'no-such-run' })).status).toBe(404);
    expect((await t.post('traces/link-to-run', { trace_ids: ['tr-b'] })).body.error_code).toBe('INVALID_PARAMETER_VALUE');
    expect((await byRun(runId, '!=')).status).toBe(400);
  });
});
