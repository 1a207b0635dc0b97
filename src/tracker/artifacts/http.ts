import type { Context } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../../platform/http.ts';
import { downloadArtifact } from './files.ts';
import type { ObjectStore } from '../../platform/objects/index.ts';
import { lookupTable } from '../../platform/lookup-table.ts';

// Content types for the files MLflow clients and the UI look at; anything else is bytes. Always sent as an
// attachment with nosniff, as MLflow does, so a stored HTML file never runs on the server's origin.
const TYPES: Record<string, string> = lookupTable({
  json: 'application/json',
  txt: 'text/plain',
  log: 'text/plain',
  md: 'text/plain',
  yaml: 'text/plain',
  yml: 'text/plain',
  csv: 'text/plain',
  py: 'text/plain',
  html: 'text/html',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
});

export function contentTypeOf(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  // A file without an extension (MLmodel, MLproject, LICENSE) is text, as MLflow serves it.
  if (!base.includes('.')) return 'text/plain';
  const ext = base.slice(base.lastIndexOf('.') + 1).toLowerCase();
  return TYPES[ext] ?? 'application/octet-stream';
}

/** A streamed file response for an artifact key; `name` is the path shown to the user (its basename is the file name). */
export async function sendArtifact(c: Context<AppEnv>, store: ObjectStore, key: string, name = key): Promise<Response> {
  const { body, size } = await downloadArtifact(store, key);
  const file = name.slice(name.lastIndexOf('/') + 1);
  return c.body(body, 200, {
    'Content-Type': contentTypeOf(file),
    'Content-Length': String(size),
    'Content-Disposition': `attachment; filename="${file.replace(/["\\\r\n]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(file)}`,
    'X-Content-Type-Options': 'nosniff',
  });
}

/**
 * What the trailing '*' of the matched route covers, still percent-encoded as it came (so paths.ts sees an
 * encoded '/' or '.' for what it is).
 */
export function wildcardTail(c: Context<AppEnv>): string {
  const pattern = routePath(c);
  const literal = pattern.endsWith('*') ? pattern.slice(0, -1) : pattern;
  const raw = new URL(c.req.url).pathname;
  // Anything else (another spelling of the prefix) reads as the root, which every operation here refuses.
  return raw.startsWith(literal) ? raw.slice(literal.length) : '';
}
