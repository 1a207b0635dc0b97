import type { Database, QueryOptions, Sql } from '../../src/platform/db/index.ts';

/** A connection that counts the statements sent through it, to prove a request costs a fixed number of them. */
export function countingSql(inner: Sql): Sql & { count: number } {
  const counted = {
    count: 0,
    query: <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
      counted.count += 1;
      return inner.query<T>(text, params, options);
    },
    exec: (script: string) => {
      counted.count += 1;
      return inner.exec(script);
    },
    copyIn: (target: string, input: Iterable<Uint8Array>) => {
      counted.count += 1;
      return inner.copyIn(target, input);
    },
  };
  return counted;
}

/**
 * Follows a search's page tokens to the end over a counting connection, checking that each page costs exactly one
 * statement; returns every id in the order the pages gave them.
 */
export async function pageThrough(
  db: Sql,
  page: (sql: Sql, pageToken: string | undefined) => Promise<{ ids: string[]; nextPageToken?: string | undefined }>,
): Promise<string[]> {
  const counted = countingSql(db);
  const seen: string[] = [];
  let pageToken: string | undefined;
  do {
    counted.count = 0;
    const result = await page(counted, pageToken);
    if (counted.count !== 1) throw new Error(`a page cost ${counted.count} statements, not one`);
    seen.push(...result.ids);
    pageToken = result.nextPageToken;
  } while (pageToken);
  return seen;
}

/** A database that records the text of every statement sent through it, in transactions and COPY too. */
export function recordingDatabase(inner: Database): Database & { statements: string[] } {
  const statements: string[] = [];
  const recorded = (sql: Sql): Sql => ({
    query: <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => (
      statements.push(text), sql.query<T>(text, params, options)
    ),
    exec: (script: string) => (statements.push(script), sql.exec(script)),
    copyIn: (target: string, input: Iterable<Uint8Array>) => (statements.push(`COPY ${target}`), sql.copyIn(target, input)),
  });
  return {
    ...recorded(inner),
    statements,
    kind: inner.kind,
    transaction: (fn) => inner.transaction((tx) => fn(recorded(tx))),
    copyOut: (select, onChunk, options) => (statements.push(select), inner.copyOut(select, onChunk, options)),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}
