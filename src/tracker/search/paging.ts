import { invalidParameter } from '../errors.ts';

// Offset paging as MLflow does it: the page token is base64 of {"offset": n}. A page asks for one row more than
// it returns, so the next token appears exactly when another page exists.

export const MAX_RESULTS = {
  runs: 50_000,
  experiments: 50_000,
  registeredModels: 1_000,
  modelVersions: 200_000,
  loggedModels: 50_000,
} as const;

export function checkMaxResults(maxResults: number, limit: number): number {
  if (!Number.isSafeInteger(maxResults) || maxResults < 1) {
    throw invalidParameter(`Invalid value ${maxResults} for parameter 'max_results' supplied. It must be a positive integer`);
  }
  if (maxResults > limit) {
    throw invalidParameter(`Invalid value ${maxResults} for parameter 'max_results' supplied. It must be at most ${limit}`);
  }
  return maxResults;
}

export function encodePageToken(payload: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
}

/** The JSON object inside a token, or a refusal that says what was wrong with it. */
export function decodePageToken(token: string): Record<string, unknown> {
  // A '+' that crossed a query string unescaped arrives as a space.
  const trimmed = token.trim().replace(/ /g, '+');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw invalidParameter('Invalid page token, could not base64-decode');
  const decoded = Buffer.from(trimmed, 'base64').toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoded);
  } catch {
    throw invalidParameter(`Invalid page token, decoded value=${decoded}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidParameter(`Invalid page token, parsed value=${decoded}`);
  }
  return parsed as Record<string, unknown>;
}

export function readOffset(payload: Record<string, unknown>): number {
  const offset = typeof payload.offset === 'string' ? Number(payload.offset) : payload.offset;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
    throw invalidParameter(`Invalid page token, parsed value=${JSON.stringify(payload)}`);
  }
  return offset;
}

/** The offset a runs/experiments/registry token carries; 0 without a token. */
export function startOffset(pageToken: string | undefined): number {
  return pageToken ? readOffset(decodePageToken(pageToken)) : 0;
}

/** Splits the maxResults + 1 rows a page query read into the page and, when there is more, the next token. */
export function page<T>(rows: T[], offset: number, maxResults: number, token = (next: number) => encodePageToken({ offset: next })) {
  const more = rows.length > maxResults;
  return { rows: more ? rows.slice(0, maxResults) : rows, nextPageToken: more ? token(offset + maxResults) : undefined };
}
