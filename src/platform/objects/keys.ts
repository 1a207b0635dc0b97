import { ObjectStoreError } from './errors.ts';

const MAX_KEY_BYTES = 1024; // S3's limit; the folder store keeps the same so keys move between stores.

// A key is a relative path: no leading '/', no backslash, no NUL, no empty, '.' or '..' segment. Rejecting these
// (rather than normalising them) keeps every key inside the store's root and means one object has one key.
export function checkKey(key: string): string {
  const why = keyProblem(key);
  if (why) throw invalid(key, why);
  return key;
}

// A folder prefix: '' (the root) or a valid key path, returned with exactly one trailing '/'.
export function checkPrefix(prefix: string): string {
  if (prefix === '' || prefix === '/') return '';
  const bare = typeof prefix === 'string' && prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  const why = keyProblem(bare);
  if (why) throw invalid(prefix, why);
  return `${bare}/`;
}

function keyProblem(key: string): string | null {
  if (typeof key !== 'string' || key.length === 0) return 'is empty';
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) return `is longer than ${MAX_KEY_BYTES} bytes`;
  if (key.includes('\0')) return 'contains a NUL character';
  if (key.includes('\\')) return 'contains a backslash';
  if (key.startsWith('/')) return 'is absolute (starts with /)';
  if (key.endsWith('/')) return 'ends with / (that names a folder, not an object)';
  for (const segment of key.split('/')) {
    if (segment === '') return 'has an empty path segment';
    if (segment === '.' || segment === '..') return `has a '${segment}' segment`;
  }
  return null;
}

function invalid(key: string, why: string): ObjectStoreError {
  return new ObjectStoreError('INVALID_KEY', `object key ${JSON.stringify(String(key).slice(0, 200))} ${why}`);
}
