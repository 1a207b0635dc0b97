import { createHash, randomUUID } from 'node:crypto';
import type { Database, Sql } from '../../platform/db/index.ts';
import { doesNotExist } from '../errors.ts';
import { getExperiment } from '../experiments/load.ts';
import { writeKeyValues } from '../rows.ts';
import type { KeyValue } from '../wire/fields.ts';
import { requestWorkspace, workspaceIs } from '../workspaces/sql.ts';
import type { EvaluationRecord } from './messages.ts';

// Evaluation dataset writes. A record is identified by its inputs: upserting records with the same inputs merges
// their expectations and tags into the stored record (MLflow's merge_records), new inputs add a record.

export const datasetNotFound = (id: string) => doesNotExist(`Evaluation dataset with id '${id}' not found.`);

/** JSON with sorted keys: the same inputs give the same key whatever order the client wrote them in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

async function existing(tx: Sql, id: string): Promise<void> {
  const rows = await tx.query(
    `SELECT 1 FROM tracker_evaluation_datasets WHERE dataset_id = $1 AND ${workspaceIs('workspace', '$2')} FOR UPDATE`,
    [id, requestWorkspace()],
  );
  if (rows.length === 0) throw datasetNotFound(id);
}

async function touch(tx: Sql, id: string, now: number): Promise<void> {
  await tx.query(`UPDATE tracker_evaluation_datasets SET last_update_time = $2 WHERE dataset_id = $1`, [id, now]);
}

async function checkExperiments(db: Sql, ids: number[]): Promise<void> {
  for (const id of ids) await getExperiment(db, id);
}

export async function createEvaluationDataset(
  db: Database,
  input: { name: string; experimentIds: number[]; tags: KeyValue[] },
  now: number,
): Promise<string> {
  await checkExperiments(db, input.experimentIds);
  const id = `d-${randomUUID().replaceAll('-', '')}`;
  const digest = createHash('sha256').update(`${input.name}:${now}`).digest('hex').slice(0, 8);
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO tracker_evaluation_datasets (dataset_id, name, digest, created_time, last_update_time, workspace)
       VALUES ($1, $2, $3, $4, $4, $5)`,
      [id, input.name, digest, now, requestWorkspace()],
    );
    await writeKeyValues(tx, 'evaluationDatasetTags', [id], input.tags);
    await linkExperiments(tx, id, input.experimentIds);
  });
  return id;
}

async function linkExperiments(tx: Sql, id: string, experimentIds: number[]): Promise<void> {
  if (experimentIds.length === 0) return;
  await tx.query(
    `INSERT INTO tracker_evaluation_dataset_experiments (dataset_id, experiment_id) SELECT $1, e FROM unnest($2::bigint[]) AS e
     ON CONFLICT DO NOTHING`,
    [id, experimentIds],
  );
}

export async function deleteEvaluationDataset(db: Sql, id: string): Promise<void> {
  const rows = await db.query(
    `DELETE FROM tracker_evaluation_datasets WHERE dataset_id = $1 AND ${workspaceIs('workspace', '$2')} RETURNING dataset_id`,
    [id, requestWorkspace()],
  );
  if (rows.length === 0) throw datasetNotFound(id);
}

export async function setEvaluationDatasetTags(db: Database, id: string, tags: KeyValue[], now: number): Promise<void> {
  await db.transaction(async (tx) => {
    await existing(tx, id);
    await writeKeyValues(tx, 'evaluationDatasetTags', [id], tags);
    await touch(tx, id, now);
  });
}

export async function deleteEvaluationDatasetTag(db: Database, id: string, key: string, now: number): Promise<void> {
  await db.transaction(async (tx) => {
    await existing(tx, id);
    await tx.query(`DELETE FROM tracker_evaluation_dataset_tags WHERE dataset_id = $1 AND key = $2`, [id, key]);
    await touch(tx, id, now);
  });
}

/** Links (or unlinks) experiments; linking one twice or unlinking one not linked changes nothing. */
export async function setDatasetExperiments(db: Database, id: string, experimentIds: number[], link: boolean, now: number): Promise<void> {
  await db.transaction(async (tx) => {
    await existing(tx, id);
    if (link) {
      await checkExperiments(tx, experimentIds);
      await linkExperiments(tx, id, experimentIds);
    } else {
      await tx.query(`DELETE FROM tracker_evaluation_dataset_experiments WHERE dataset_id = $1 AND experiment_id = ANY($2::bigint[])`, [
        id,
        experimentIds,
      ]);
    }
    await touch(tx, id, now);
  });
}

/** Adds records with new inputs and merges the others into the stored ones; the counts of each. */
export async function upsertRecords(
  db: Database,
  id: string,
  records: EvaluationRecord[],
  now: number,
): Promise<{ inserted: number; updated: number }> {
  return db.transaction(async (tx) => {
    await existing(tx, id);
    let inserted = 0;
    let updated = 0;
    for (const record of records) {
      const key = canonical(record.inputs);
      const [stored] = await tx.query<{ record_id: string; record: string }>(
        `SELECT record_id, record FROM tracker_evaluation_dataset_records WHERE dataset_id = $1 AND inputs_key = $2 FOR UPDATE`,
        [id, key],
      );
      if (stored) {
        const old = JSON.parse(stored.record) as EvaluationRecord;
        const merged = {
          ...old,
          expectations: { ...old.expectations, ...record.expectations },
          tags: { ...old.tags, ...record.tags },
          ...(record.source !== undefined ? { source: record.source } : {}),
        };
        await tx.query(`UPDATE tracker_evaluation_dataset_records SET record = $2, last_update_time = $3 WHERE record_id = $1`, [
          stored.record_id,
          JSON.stringify(merged),
          now,
        ]);
        updated++;
      } else {
        await tx.query(
          `INSERT INTO tracker_evaluation_dataset_records (record_id, dataset_id, inputs_key, record, created_time, last_update_time)
           VALUES ($1, $2, $3, $4, $5, $5)`,
          [`dr-${randomUUID().replaceAll('-', '')}`, id, key, JSON.stringify(record), now],
        );
        inserted++;
      }
    }
    await touch(tx, id, now);
    return { inserted, updated };
  });
}

export async function deleteRecords(db: Database, id: string, recordIds: string[], now: number): Promise<number> {
  return db.transaction(async (tx) => {
    await existing(tx, id);
    const rows = await tx.query(
      `DELETE FROM tracker_evaluation_dataset_records WHERE dataset_id = $1 AND record_id = ANY($2::text[]) RETURNING record_id`,
      [id, recordIds],
    );
    await touch(tx, id, now);
    return rows.length;
  });
}
