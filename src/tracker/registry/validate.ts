import { invalidParameter } from '../errors.ts';

// MLflow's rules for registry names, aliases, versions and stages, with its messages where it has some.

export const STAGES = ['None', 'Staging', 'Production', 'Archived'] as const;
export type Stage = (typeof STAGES)[number];
/** The stages archive_existing_versions applies to (MLflow's "active" stages). */
const ACTIVE_STAGES: readonly Stage[] = ['Staging', 'Production'];

/** A stage as the client may spell it ('production', 'PRODUCTION') in MLflow's canonical form. */
export function canonicalStage(stage: string): Stage {
  const found = STAGES.find((s) => s.toLowerCase() === stage.toLowerCase());
  if (!found) throw invalidParameter(`Invalid Model Version stage: ${stage}. Value must be one of ${STAGES.join(', ')}.`);
  return found;
}

export function checkArchivable(stage: Stage): void {
  if (!ACTIVE_STAGES.includes(stage)) {
    throw invalidParameter(
      `Model version transition cannot archive existing model versions because '${stage}' is not an Active stage. ` +
        `Valid stages are ${ACTIVE_STAGES.join(', ')}.`,
    );
  }
}

/** Names end up in URIs (models:/<name>/<version>) and paths, so '/' and ':' and path tricks are refused. */
export function checkModelName(name: string, field = 'name'): string {
  if (name.trim() === '') throw invalidParameter(`Missing value for required parameter '${field}'.`);
  if (name.includes('/') || name.includes(':')) {
    throw invalidParameter(`Invalid model name '${name}'. Names cannot contain '/' or ':'.`);
  }
  // With '/' refused, '.' and '..' are the only names that would resolve to another path.
  if (name === '.' || name === '..') {
    throw invalidParameter(`Invalid value '${name}' for parameter '${field}': names must not resolve to other names as paths.`);
  }
  return name;
}

/** A version number as sent ("3" or 3): a positive integer. */
export function parseVersion(version: string | number): number {
  const text = String(version).trim();
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > 2_147_483_647) {
    throw invalidParameter(`Parameter 'version' must be an integer, got '${version}'.`);
  }
  return n;
}

const ALIAS = /^[\w-]*$/;

export function checkAlias(alias: string): string {
  if (alias === '') throw invalidParameter('Registered model alias name cannot be empty.');
  if (!ALIAS.test(alias)) {
    throw invalidParameter(`Invalid alias name: '${alias}'. Names may only contain alphanumerics, underscores (_), and dashes (-).`);
  }
  if (alias.length > 255) throw invalidParameter('Registered model alias name exceeds the maximum length of 255.');
  return alias;
}

/** Aliases a client may set: 'latest' and 'v<N>' are resolved by the server and cannot name a version. */
export function checkSettableAlias(alias: string): string {
  checkAlias(alias);
  if (alias.toLowerCase() === 'latest') throw invalidParameter("'latest' alias name (case insensitive) is reserved.");
  if (/^[vV]\d+$/.test(alias)) throw invalidParameter(`Version alias name '${alias}' is reserved.`);
  return alias;
}

/** Tag keys (of registered models and versions) are never empty. */
export function checkTagKeys(tags: readonly { key: string }[]): void {
  if (tags.some((t) => t.key.trim() === '')) throw invalidParameter("Missing value for required parameter 'key'.");
}
