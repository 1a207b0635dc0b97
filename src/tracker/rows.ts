import type { Sql } from '../platform/db/index.ts';
import type { KeyValue } from './wire/fields.ts';

// What every feature's store and loader share: the one write of the key/value tables (tags and params of runs,
// experiments, logged models, registered models and model versions; tags and metadata of traces), and grouping
// rows by their owner.

const TABLES = {
  runTags: { table: 'tracker_tags', owner: ['run_id::text'] },
  runParams: { table: 'tracker_params', owner: ['run_id::text'] },
  experimentTags: { table: 'tracker_experiment_tags', owner: ['experiment_id::bigint'] },
  loggedModelTags: { table: 'tracker_logged_model_tags', owner: ['model_id::text'] },
  loggedModelParams: { table: 'tracker_logged_model_params', owner: ['model_id::text'] },
  registeredModelTags: { table: 'tracker_registered_model_tags', owner: ['name::text'] },
  modelVersionTags: { table: 'tracker_model_version_tags', owner: ['name::text', 'version::int'] },
  traceTags: { table: 'tracker_trace_tags', owner: ['trace_id::text'] },
  traceMetadata: { table: 'tracker_trace_metadata', owner: ['trace_id::text'] },
  evaluationDatasetTags: { table: 'tracker_evaluation_dataset_tags', owner: ['dataset_id::text'] },
} as const;

export type KeyValueTable = keyof typeof TABLES;

/**
 * Writes key/value pairs of one owner in one statement; the last value of a repeated key wins. `overwrite`
 * replaces stored values (tags); `keep` leaves a stored value alone (params are written once: the caller compares
 * afterwards). Returns the pairs as written, one per key.
 */
export async function writeKeyValues(
  tx: Sql,
  kind: KeyValueTable,
  owner: readonly (string | number)[],
  pairs: readonly KeyValue[],
  onConflict: 'overwrite' | 'keep' = 'overwrite',
): Promise<KeyValue[]> {
  const last = new Map(pairs.map((p) => [p.key, p.value]));
  if (last.size === 0) return [];
  const { table, owner: columns } = TABLES[kind];
  const names = columns.map((c) => c.split('::')[0]!);
  const ownerParams = columns.map((c, i) => `$${i + 1}::${c.split('::')[1]}`);
  const k = `$${columns.length + 1}::text[]`;
  const v = `$${columns.length + 2}::text[]`;
  await tx.query(
    `INSERT INTO ${table} (${names.join(', ')}, key, value)
     SELECT ${ownerParams.join(', ')}, k, v FROM unnest(${k}, ${v}) AS t(k, v)
     ON CONFLICT (${names.join(', ')}, key) DO ${onConflict === 'overwrite' ? 'UPDATE SET value = EXCLUDED.value' : 'NOTHING'}`,
    [...owner, [...last.keys()], [...last.values()]],
  );
  return [...last].map(([key, value]) => ({ key, value }));
}

export function groupBy<T, K>(items: T[], keyOf: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = out.get(key);
    if (list) list.push(item);
    else out.set(key, [item]);
  }
  return out;
}

/** Rows keyed by owner as the wire's key/value list (the owner column dropped). */
export const keyValues = (rows: readonly KeyValue[] | undefined): KeyValue[] => (rows ?? []).map(({ key, value }) => ({ key, value }));
