import type { Database, Sql } from '../../platform/db/index.ts';
import { invalidParameter } from '../errors.ts';
import { writeKeyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { writeRun } from './active.ts';
import { RUN_NAME_TAG, type Batch, type MetricPoint } from './messages.ts';

// Params are written once (the same value again is fine, another value is refused), tags are overwritten, metric
// points are appended and the latest point per key is kept beside them for search. Every write is one
// transaction and safe to repeat: a client that retries after a lost answer changes nothing the second time.

/** Writes a checked batch (messages.ts); `single` words a refused param as log-parameter does. */
export async function logBatch(db: Database, runId: string, batch: Batch, opts: { single?: boolean } = {}): Promise<void> {
  await writeRun(db, runId, async (tx, { experimentId }) => {
    await writeParams(tx, runId, batch.params, opts);
    await writeMetrics(tx, runId, experimentId, batch.metrics);
    await writeTags(tx, runId, batch.tags);
  });
}

async function writeParams(tx: Sql, runId: string, params: KeyValue[], opts: { single?: boolean }): Promise<void> {
  if (params.length === 0) return;
  // Insert what is new, then compare with what is stored: a concurrent writer of the same key has committed by
  // then (the insert waited for it), so two different values can never both succeed.
  await writeKeyValues(tx, 'runParams', [runId], params, 'keep');
  const stored = await tx.query<KeyValue>(`SELECT key, value FROM tracker_params WHERE run_id = $1 AND key = ANY($2::text[])`, [
    runId,
    params.map((p) => p.key),
  ]);
  const old = new Map(stored.map((r) => [r.key, r.value]));
  const changed = params
    .filter((p) => old.get(p.key) !== p.value)
    .map((p) => ({ key: p.key, old_value: old.get(p.key) ?? '', new_value: p.value }));
  if (changed.length === 0) return;
  if (opts.single) {
    const [c] = changed;
    throw invalidParameter(
      `Changing param values is not allowed. Param with key='${c!.key}' was already logged with value='${c!.old_value}' ` +
        `for run ID='${runId}'. Attempted logging new value '${c!.new_value}'.`,
    );
  }
  const listed = changed.map((c) => `{'key': ${pyStr(c.key)}, 'old_value': ${pyStr(c.old_value)}, 'new_value': ${pyStr(c.new_value)}}`);
  throw invalidParameter(
    `Changing param values is not allowed. Params were already logged='[${listed.join(', ')}]' for run ID='${runId}'.`,
  );
}

async function writeTags(tx: Sql, runId: string, tags: KeyValue[]): Promise<void> {
  const written = await writeKeyValues(tx, 'runTags', [runId], tags);
  // The run name tag and the run's name are one fact.
  const name = written.find((t) => t.key === RUN_NAME_TAG)?.value;
  if (name) await tx.query(`UPDATE tracker_runs SET name = $2 WHERE run_id = $1`, [runId, name]);
}

/**
 * Appends the points (an exact repeat is one row) and moves the latest point per key forward. The latest-metric
 * upsert only replaces a row whose (step, timestamp, value) is smaller, and takes the row lock to compare, so
 * concurrent writers to one run settle on the true maximum whatever order they commit in. Keys go in sorted
 * order so two batches on one run lock rows in the same order and cannot deadlock.
 */
async function writeMetrics(tx: Sql, runId: string, experimentId: number, metrics: MetricPoint[]): Promise<void> {
  if (metrics.length === 0) return;
  const points = dedupe(metrics).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const isNan = points.map((m) => Number.isNaN(m.value));
  // NaN is kept as is_nan with value 0 (MLflow's representation), so ordering never meets a NaN.
  const values = points.map((m, i) => (isNan[i] ? 0 : m.value));
  const cols = [
    points.map((m) => m.key),
    values,
    // As text: postgres.js types a JS boolean[] parameter as a scalar boolean.
    isNan.map((n) => (n ? 't' : 'f')),
    points.map((m) => m.timestamp),
    points.map((m) => m.step),
    points.map((m) => m.model_id ?? null),
    points.map((m) => m.dataset_name ?? null),
    points.map((m) => m.dataset_digest ?? null),
  ];
  const unnest = `unnest($2::text[], $3::float8[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[])
                  AS m(k, v, n, ts, st, mid, dn, dd)`;
  // One statement: the points, then the latest per key (a data-modifying WITH runs whether or not it is read).
  await tx.query(
    `WITH appended AS (
       INSERT INTO tracker_metrics (run_id, key, value, is_nan, timestamp, step, model_id, dataset_name, dataset_digest)
       SELECT $1, k, v, n::bool, ts, st, mid, dn, dd FROM ${unnest}
       ON CONFLICT DO NOTHING)
     INSERT INTO tracker_latest_metrics AS l (run_id, key, value, is_nan, timestamp, step)
     SELECT DISTINCT ON (k) $1, k, v, n::bool, ts, st FROM ${unnest}
     ORDER BY k, st DESC, ts DESC, v DESC
     ON CONFLICT (run_id, key) DO UPDATE
       SET value = EXCLUDED.value, is_nan = EXCLUDED.is_nan, timestamp = EXCLUDED.timestamp, step = EXCLUDED.step
       WHERE (EXCLUDED.step, EXCLUDED.timestamp, EXCLUDED.value) > (l.step, l.timestamp, l.value)`,
    [runId, ...cols],
  );
  // Points logged for a logged model also belong to the model (MLflow 3's log_model re-logs them with model_id).
  if (points.some((m) => m.model_id)) {
    await tx.query(
      `INSERT INTO tracker_logged_model_metrics (model_id, key, value, is_nan, timestamp, step, run_id, dataset_name, dataset_digest)
       SELECT mid, k, v, n::bool, ts, st, $1, dn, dd FROM ${unnest}
       WHERE mid IS NOT NULL AND EXISTS (SELECT 1 FROM tracker_logged_models lm WHERE lm.model_id = mid AND lm.experiment_id = $10)
       ON CONFLICT DO NOTHING`,
      [runId, ...cols, experimentId],
    );
  }
}

function dedupe(metrics: MetricPoint[]): MetricPoint[] {
  const seen = new Map<string, MetricPoint>();
  for (const m of metrics) {
    const id = JSON.stringify([m.key, m.step, m.timestamp, Number.isNaN(m.value) ? 'NaN' : String(m.value), m.model_id ?? null]);
    if (!seen.has(id)) seen.set(id, m);
  }
  return [...seen.values()];
}

const pyStr = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
