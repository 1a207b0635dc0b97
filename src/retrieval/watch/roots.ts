import { realpath } from 'node:fs/promises';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArtifactRoot, type ArtifactRoot } from '../../platform/objects/index.ts';

// SVC_WATCH_ROOTS: the folders and S3 prefixes a collection may watch. A watch URI must lie under one of them; a
// folder is compared by its real path, so a symbolic link cannot carry a watch out of its root.

export type WatchRoots = ArtifactRoot[];
export type Source = { kind: 'folder'; path: string } | { kind: 's3'; bucket: string; prefix: string };

export class WatchUriError extends Error {
  override name = 'WatchUriError';
}

/** Each entry a folder (absolute path or file:// URI) or s3://bucket/prefix; throws naming the entry. */
export function parseWatchRoots(entries: string[]): WatchRoots {
  return entries.map((entry) => {
    const root = parseArtifactRoot(entry);
    if (root.kind === 'folder' && !/^(file:|\/)/i.test(entry)) {
      throw new Error(`SVC_WATCH_ROOTS entry ${JSON.stringify(entry)} is not an absolute folder, file:// URI or s3://bucket/prefix`);
    }
    return root;
  });
}

/** The source a watch URI names, once it is known to lie under a root (folders by their real path). */
export async function resolveWatchUri(uri: string, roots: WatchRoots): Promise<Source> {
  if (roots.length === 0)
    throw new WatchUriError(
      'Watching is off on this server: SVC_WATCH_ROOTS is empty. Ask the operator to list the folders and S3 prefixes collections may watch.',
    );
  const source = parseSource(uri);
  const allowed = `SVC_WATCH_ROOTS (${roots.map(describeRoot).join(', ')})`;
  if (source.kind === 's3') {
    const under = roots.some((r) => r.kind === 's3' && r.bucket === source.bucket && within(source.prefix, r.prefix, '/'));
    if (!under) throw new WatchUriError(`${uri} is not under any of ${allowed}.`);
    return source;
  }
  const real = await realpath(source.path).catch(() => {
    throw new WatchUriError(`${uri}: the folder ${source.path} does not exist or cannot be read by the service.`);
  });
  for (const r of roots) {
    if (r.kind !== 'folder') continue;
    const rootReal = await realpath(r.path).catch(() => undefined);
    if (rootReal && within(real, rootReal, sep)) return { kind: 'folder', path: real };
  }
  throw new WatchUriError(
    real === source.path
      ? `${uri} is not under any of ${allowed}.`
      : `${uri} leads to ${real} through a symbolic link, which is not under any of ${allowed}.`,
  );
}

function parseSource(uri: string): Source {
  if (/^s3:\/\//i.test(uri)) {
    try {
      const root = parseArtifactRoot(uri);
      if (root.kind === 's3') return root;
    } catch (err) {
      throw new WatchUriError(`${uri} is not a valid S3 location: ${(err as Error).message}`);
    }
  }
  if (/^file:\/\//i.test(uri)) {
    try {
      return { kind: 'folder', path: fileURLToPath(uri) };
    } catch (err) {
      throw new WatchUriError(`${uri} is not a valid file:// URI: ${(err as Error).message}`);
    }
  }
  throw new WatchUriError(`${JSON.stringify(uri)} is neither file:///<folder> nor s3://<bucket>/<prefix>.`);
}

/** `inner` is `outer` or lies below it, at a separator (so /data/watched2 is not under /data/watched). */
function within(inner: string, outer: string, separator: string): boolean {
  if (outer === '' || inner === outer) return true;
  const base = outer.endsWith(separator) ? outer : outer + separator;
  return inner.startsWith(base);
}

const describeRoot = (r: ArtifactRoot) => (r.kind === 'folder' ? r.path : `s3://${r.bucket}/${r.prefix}`);
