import type { TrackerDeps } from '../deps.ts';
import { invalidParameter } from '../errors.ts';
import { checkArtifactPath, keyOfProxiedUri } from './paths.ts';

/**
 * The store key of an artifact URI this server holds: `mlflow-artifacts:/<path>` (the proxy), or a location
 * under the configured root written out in full (s3://bucket/prefix/<path>, file:///root/<path>); null otherwise.
 */
export function storeKeyOf(deps: Pick<TrackerDeps, 'artifactRoot'>, uri: string): string | null {
  const proxied = keyOfProxiedUri(uri);
  if (proxied !== null) return proxied;
  const root = deps.artifactRoot.replace(/\/+$/, '');
  for (const base of [root, root.startsWith('/') ? `file://${root}` : null]) {
    if (base && uri.startsWith(`${base}/`)) return checkArtifactPath(uri.slice(base.length + 1));
    if (base && uri === base) return '';
  }
  return null;
}

/** As storeKeyOf, refusing a location this server does not hold. */
export function requireStoreKey(deps: Pick<TrackerDeps, 'artifactRoot'>, uri: string): string {
  const key = storeKeyOf(deps, uri);
  if (key === null) throw invalidParameter(`Artifacts at '${uri}' are not held by this server; read them from that location directly.`);
  return key;
}
