import { invalidParameter } from '../errors.ts';
import { strOrEmpty } from '../wire/fields.ts';

// Artifact paths arrive percent-encoded in URLs and query strings. A path is checked after decoding it until it
// stops changing (so '%252e%252e' is caught as '..'), and refused rather than normalised: no '..' or '.' segment,
// no leading '/', no backslash, no control character, no empty segment. What passes is a key of the artifact
// store, relative to the artifact root, so no request can reach outside the root.

const MAX_DECODES = 5;

/** A path from a URL (still percent-encoded, as in the request line) as a store key. */
export function artifactKeyFromUrl(encoded: string): string {
  return checkArtifactPath(decodeOnce(encoded));
}

/**
 * A path already decoded once (a query parameter, a JSON field) as a store key; a trailing '/' is dropped. Also
 * checks every further decoding, since a later reader (a client, a proxy) may decode it again.
 */
export function checkArtifactPath(path: string): string {
  let current = path;
  for (let i = 0; i < MAX_DECODES; i++) {
    problem(current, path);
    const next = current.includes('%') ? tryDecode(current) : current;
    if (next === current) break;
    current = next;
  }
  return path.replace(/\/+$/, '');
}

function problem(p: string, original: string): void {
  const bad = (why: string) => invalidParameter(`Invalid path '${original.slice(0, 300)}': ${why}.`);
  // Control characters (NUL included) never belong in a path and confuse logs and file systems.
  if (/[\u0000-\u001f\u007f]/.test(p)) throw bad('it contains a control character');
  if (p.includes('\\')) throw bad('it contains a backslash');
  if (p.startsWith('/')) throw bad('it is absolute');
  if (/^[a-zA-Z]:/.test(p)) throw bad('it names a drive');
  if (p.includes('#')) throw bad("it contains '#'");
  const segments = p.replace(/\/+$/, '').split('/');
  for (const s of segments) {
    if (s === '..' || s === '.') throw bad(`it has a '${s}' segment`);
  }
  if (p !== '' && segments.some((s) => s === '')) throw bad('it has an empty segment');
}

function decodeOnce(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw invalidParameter(`Invalid path '${encoded.slice(0, 300)}': it is not valid percent-encoding.`);
  }
}

function tryDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // a literal '%' that is not an escape: nothing more to decode
  }
}

/**
 * The store key an `mlflow-artifacts:` URI names ('mlflow-artifacts:/1/abc/artifacts' or with a host,
 * 'mlflow-artifacts://host:5000/1/abc/artifacts' -> '1/abc/artifacts'), or null for any other URI.
 */
export function keyOfProxiedUri(uri: string): string | null {
  const m = /^mlflow-artifacts:(?:\/\/[^/]*)?\/*(.*)$/i.exec(uri);
  if (!m) return null;
  return checkArtifactPath(m[1]!);
}

/** Joins a root key and a relative path ('' for either means nothing to add). */
export const joinKey = (root: string, rel: string): string => (root && rel ? `${root}/${rel}` : root || rel);

/** True when `key` is `root` or lies under it. */
export const isWithin = (key: string, root: string): boolean => root === '' || key === root || key.startsWith(`${root}/`);

/** A message field holding an artifact path relative to some root ('' when absent: the root itself). */
export const artifactPathField = () => strOrEmpty().transform((p) => checkArtifactPath(p));
