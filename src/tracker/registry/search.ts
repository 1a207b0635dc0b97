import type { Sql } from '../../platform/db/types.ts';
import { invalidParameter } from '../errors.ts';
import { parseFilter, parseOrderBy, type Comparison, type Identifier } from '../search/filter.ts';
import { checkMaxResults, MAX_RESULTS, page, startOffset } from '../search/paging.ts';
import {
  attributeNamed,
  checkDistinct,
  checkOp,
  compare,
  NUMERIC_OPS,
  orderEntries,
  Params,
  SEARCH_STATEMENT,
  STRING_OPS,
  stringValue,
} from '../search/sql.ts';
import { modelInWorkspace, requestWorkspace, workspaceIs } from '../workspaces/sql.ts';
import { lookupTable } from '../../platform/lookup-table.ts';

// search_registered_models and search_model_versions. MLflow 3 clients append
// tag.`mlflow.prompt.is_prompt` != 'true' to both searches to hide prompts; a model without that tag is not a
// prompt, so for this one key a missing tag reads as 'false' (as MLflow's registry does).

const PROMPT_TAG = 'mlflow.prompt.is_prompt';

export type RegistrySearchRequest = { filter?: string; maxResults: number; orderBy?: string[]; pageToken?: string };

function entityOf(identifier: Identifier): 'attribute' | 'tag' {
  if (identifier.entity === undefined || identifier.entity === 'attribute') return 'attribute';
  if (identifier.entity === 'tag' || identifier.entity === 'tags') return 'tag';
  throw invalidParameter(`Invalid entity type '${identifier.entity}'. Valid entity types are ('attribute', 'tag', 'tags')`);
}

/** A tag comparison; `tagValue` is the SQL expression of the tag's value (NULL when the tag is missing). */
function tagCondition(c: Comparison, tagValue: (keyParam: string) => string, params: Params): string {
  const { key } = c.identifier;
  checkOp(c, STRING_OPS, `tag '${key}'`);
  const value = stringValue(c.value, 'tag');
  const column = tagValue(params.add(key));
  return compare(key === PROMPT_TAG ? `COALESCE(${column}, 'false')` : column, c.op, value, params);
}

// Registered models are filtered by name alone.
const MODEL_ATTRIBUTES = lookupTable({ name: 'm.name' });

function modelCondition(c: Comparison, params: Params): string {
  if (entityOf(c.identifier) === 'tag') {
    return tagCondition(c, (k) => `(SELECT t.value FROM tracker_registered_model_tags t WHERE t.name = m.name AND t.key = ${k})`, params);
  }
  const column = attributeNamed(MODEL_ATTRIBUTES, c.identifier.key);
  if (c.value.kind === 'list')
    throw invalidParameter("Only the 'run_id' attribute supports comparison with a list of quoted string values.");
  if (c.value.kind === 'number') {
    throw invalidParameter(`Expected a quoted string value or a list of quoted string values for attributes. Got value ${c.value.text}`);
  }
  checkOp(c, STRING_OPS, `attribute 'name'`);
  return compare(column, c.op, stringValue(c.value, 'attributes'), params);
}

const MODEL_ORDER: Record<string, string> = lookupTable({
  name: 'm.name',
  timestamp: 'm.creation_time',
  creation_timestamp: 'm.creation_time',
  last_updated_timestamp: 'm.last_updated_time',
});

function modelOrdering(orderBy: string[]): string[] {
  const keys: string[] = [];
  const terms = orderBy.map((clause) => {
    const { identifier, ascending } = parseOrderBy(clause);
    const column = entityOf(identifier) === 'attribute' ? MODEL_ORDER[identifier.key] : undefined;
    if (!column) {
      throw invalidParameter(
        `Invalid order by key '${identifier.text}' specified. Valid keys are '${Object.keys(MODEL_ORDER).join("', '")}'`,
      );
    }
    keys.push(column);
    return `${column} ${ascending ? 'ASC' : 'DESC'}`;
  });
  checkDistinct(keys, orderBy);
  if (!keys.includes('m.name')) terms.push('m.name ASC');
  return terms;
}

export async function searchRegisteredModels(db: Sql, req: RegistrySearchRequest): Promise<{ names: string[]; nextPageToken?: string }> {
  const maxResults = checkMaxResults(req.maxResults, MAX_RESULTS.registeredModels);
  const offset = startOffset(req.pageToken);
  const params = new Params();
  const where = [
    workspaceIs('m.workspace', params.add(requestWorkspace())),
    ...parseFilter(req.filter).map((c) => modelCondition(c, params)),
  ];
  const terms = modelOrdering(orderEntries(req.orderBy));
  const sql = `SELECT m.name FROM tracker_registered_models m
    WHERE ${where.join(' AND ')}
    ORDER BY ${terms.join(', ')}
    LIMIT ${params.add(maxResults + 1)} OFFSET ${params.add(offset)}`;
  const rows = await db.query<{ name: string }>(sql, params.values, SEARCH_STATEMENT);
  const result = page(rows, offset, maxResults);
  return { names: result.rows.map((r) => r.name), ...(result.nextPageToken ? { nextPageToken: result.nextPageToken } : {}) };
}

// Model versions: `version` is accepted beside MLflow's `version_number`.
const VERSION_ATTRIBUTES: Record<string, { column: string; numeric: boolean }> = lookupTable({
  name: { column: 'v.name', numeric: false },
  run_id: { column: 'v.run_id', numeric: false },
  source_path: { column: 'v.source', numeric: false },
  version_number: { column: 'v.version', numeric: true },
  version: { column: 'v.version', numeric: true },
});

function versionCondition(c: Comparison, params: Params): string {
  if (entityOf(c.identifier) === 'tag') {
    // The prompt marker may sit on the version or on its registered model.
    const tagValue = (k: string) =>
      c.identifier.key === PROMPT_TAG
        ? `COALESCE((SELECT t.value FROM tracker_model_version_tags t WHERE t.name = v.name AND t.version = v.version AND t.key = ${k}),
                    (SELECT t.value FROM tracker_registered_model_tags t WHERE t.name = v.name AND t.key = ${k}))`
        : `(SELECT t.value FROM tracker_model_version_tags t WHERE t.name = v.name AND t.version = v.version AND t.key = ${k})`;
    return tagCondition(c, tagValue, params);
  }
  const { key } = c.identifier;
  const attribute = attributeNamed(VERSION_ATTRIBUTES, key);
  if (attribute.numeric) {
    const number =
      c.value.kind === 'number'
        ? c.value.value
        : c.value.kind === 'string' && /^\s*\d+\s*$/.test(c.value.value)
          ? Number(c.value.value)
          : undefined;
    if (number === undefined) throw invalidParameter(`Expected numeric value type for numeric attribute: ${key}. Found ${c.value.text}`);
    checkOp(c, NUMERIC_OPS, `numeric attribute '${key}'`);
    return compare(attribute.column, c.op, number, params);
  }
  if (c.value.kind === 'list') {
    if (key !== 'run_id') throw invalidParameter("Only the 'run_id' attribute supports comparison with a list of quoted string values.");
    checkOp(c, ['IN'], 'a list of run ids');
    return compare(attribute.column, c.op, c.value.values, params);
  }
  if (c.value.kind === 'number') {
    throw invalidParameter(
      `Only the 'version_number', 'creation_timestamp', 'last_updated_timestamp' attributes support comparison with numeric values.`,
    );
  }
  checkOp(c, STRING_OPS, `attribute '${key}'`);
  return compare(attribute.column, c.op, stringValue(c.value, 'attributes'), params);
}

const VERSION_ORDER: Record<string, string> = lookupTable({
  name: 'v.name',
  version_number: 'v.version',
  version: 'v.version',
  creation_timestamp: 'v.creation_time',
  last_updated_timestamp: 'v.last_updated_time',
});

function versionOrdering(orderBy: string[]): string[] {
  const clauses = orderBy.length > 0 ? orderBy : ['last_updated_timestamp DESC'];
  const keys: string[] = [];
  const terms = clauses.map((clause) => {
    const { identifier, ascending } = parseOrderBy(clause);
    if (entityOf(identifier) !== 'attribute') throw invalidParameter(`Invalid order_by entity: tag`);
    const column = attributeNamed(VERSION_ORDER, identifier.key);
    keys.push(column);
    return `${column} ${ascending ? 'ASC' : 'DESC'}`;
  });
  checkDistinct(keys, orderBy);
  if (!keys.includes('v.name')) terms.push('v.name ASC');
  if (!keys.includes('v.version')) terms.push('v.version DESC');
  return terms;
}

export async function searchModelVersions(
  db: Sql,
  req: RegistrySearchRequest,
): Promise<{ versions: { name: string; version: number }[]; nextPageToken?: string }> {
  const maxResults = checkMaxResults(req.maxResults, MAX_RESULTS.modelVersions);
  const offset = startOffset(req.pageToken);
  const params = new Params();
  const where = [
    'NOT v.deleted',
    modelInWorkspace('v.name', params.add(requestWorkspace())),
    ...parseFilter(req.filter).map((c) => versionCondition(c, params)),
  ];
  const terms = versionOrdering(orderEntries(req.orderBy));
  const sql = `SELECT v.name, v.version FROM tracker_model_versions v
    WHERE ${where.join(' AND ')}
    ORDER BY ${terms.join(', ')}
    LIMIT ${params.add(maxResults + 1)} OFFSET ${params.add(offset)}`;
  const rows = await db.query<{ name: string; version: number }>(sql, params.values, SEARCH_STATEMENT);
  const result = page(rows, offset, maxResults);
  return {
    versions: result.rows.map((r) => ({ name: r.name, version: Number(r.version) })),
    ...(result.nextPageToken ? { nextPageToken: result.nextPageToken } : {}),
  };
}
