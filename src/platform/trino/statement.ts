import { Agent, request } from 'node:https';
import { Trino, type QueryError, type QueryResult } from 'trino-client';

// One statement on Trino, run to its end with a given identity (the caller's token, or the service's): what explore
// and retrieval share. Each service maps TrinoError to its own error. One client per statement: trino-client
// mutates its headers as a query runs. The TLS connections under the clients are shared (sharedAgent).

export type TrinoConnection = {
  url: string;
  /** PEM of the CA that signed Trino's certificate, when it is not a public one. */
  ca?: string | undefined;
  /** X-Trino-Source: which service sent the statement (Trino's query list shows it). */
  source: string;
};

export type TrinoIdentity = { user: string; token: string };
export type TrinoColumn = { name: string; type: string };
export type TrinoResult = { columns: TrinoColumn[]; rows: unknown[][] };

export type TrinoErrorKind = 'unauthenticated' | 'forbidden' | 'invalid' | 'timeout' | 'unavailable';

export class TrinoError extends Error {
  constructor(
    readonly kind: TrinoErrorKind,
    message: string,
    /** Trino's own error name (PERMISSION_DENIED, TABLE_NOT_FOUND, …) when Trino answered with one. */
    readonly errorName?: string,
  ) {
    super(message);
    this.name = 'TrinoError';
  }
}

export type StatementOptions = {
  timeoutMs: number;
  /** Sees every row as it arrives; what it throws ends the statement (cancelled) and is rethrown as it is. */
  onRow?: (row: unknown[]) => void;
};

/**
 * Runs one statement to the end, checking every page for an error; past the time limit, or when `onRow` throws,
 * the query is cancelled.
 */
export async function runStatement(conn: TrinoConnection, sql: string, who: TrinoIdentity, opts: StatementOptions): Promise<TrinoResult> {
  const client = Trino.create({
    server: conn.url,
    source: conn.source,
    ...(conn.ca ? { ssl: { ca: conn.ca } } : {}),
    // X-Trino-User must name the token's subject on every request: the client's default is the OS user.
    extraHeaders: { Authorization: `Bearer ${who.token}`, 'X-Trino-User': who.user },
  });
  useAgent(client, sharedAgent(conn.ca));
  let pages: Awaited<ReturnType<Trino['query']>> | undefined;
  let stopped = false;
  let rowError: { error: unknown } | undefined;
  const collect = async (): Promise<TrinoResult> => {
    pages = await client.query(sql);
    if (stopped) cancel(conn, nextUriOf(pages), who); // the time limit passed during the POST
    let columns: TrinoColumn[] | undefined;
    const rows: unknown[][] = [];
    for (;;) {
      const { value: page, done } = (await pages.next()) as { value: QueryResult; done?: boolean };
      if (stopped) break;
      if (page.error) throw pageError(page.error);
      columns ??= page.columns?.map((c) => ({ name: c.name, type: c.type }));
      if (done) break;
      for (const row of page.data ?? []) {
        if (opts.onRow) {
          try {
            opts.onRow(row);
          } catch (error) {
            rowError = { error };
            throw error;
          }
        }
        rows.push(row);
      }
    }
    return { columns: columns ?? [], rows };
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TrinoError('timeout', `The query ran longer than ${opts.timeoutMs} ms and was cancelled.`)),
      opts.timeoutMs,
    );
  });
  const running = collect();
  running.catch(() => undefined); // after a timeout nobody awaits it any more
  try {
    return await Promise.race([running, deadline]);
  } catch (err) {
    if (rowError && err === rowError.error) throw err;
    throw err instanceof TrinoError ? err : transportError(err, conn.url);
  } finally {
    clearTimeout(timer);
    stopped = true;
    if (pages) cancel(conn, nextUriOf(pages), who); // no-op once the query has finished
  }
}

// One kept-alive agent per CA for every statement: a statement's POST, the pages it polls and the next statement reuse
// open TLS connections instead of a handshake (and a parse of the CA) each. A connection carries no identity (every
// request sends its own token), so callers may share them. An idle connection is closed well before Trino's server
// would close it, so a request never goes out on a socket the server is closing.
const agents = new Map<string, Agent>();
const IDLE_SOCKET_MS = 4_000;
function sharedAgent(ca: string | undefined): Agent {
  const key = ca ?? '';
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, ...(ca ? { ca } : {}) });
    agents.set(key, agent);
  }
  return agent;
}

/** Swaps the https.Agent trino-client 0.2.9 made for the client (its request config's httpsAgent) for the shared one. */
function useAgent(client: Trino, agent: Agent): void {
  const config = (client as unknown as { client?: { clientConfig?: { httpsAgent?: Agent } } }).client?.clientConfig;
  if (!config) throw new Error('trino-client changed: no request config to give the shared agent to');
  config.httpsAgent = agent;
}

/**
 * The query's current nextUri. trino-client 0.2.9 keeps polling inside one `next()` until a page carries data, so
 * while a long aggregation runs no page reaches the caller: the position lives only in the iterator's state.
 * Reading it there depends on the pinned version; the cancellation test in tests/integration proves it.
 */
function nextUriOf(pages: unknown): string | undefined {
  return (pages as { iter?: { queryResult?: QueryResult } }).iter?.queryResult?.nextUri;
}

/** Trino's protocol: DELETE on the current nextUri cancels the query. Best effort: the answer is already decided. */
function cancel(conn: TrinoConnection, uri: string | undefined, who: TrinoIdentity): void {
  if (!uri) return;
  const req = request(uri, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${who.token}`, 'X-Trino-User': who.user },
    agent: sharedAgent(conn.ca),
  });
  req.on('response', (res) => res.resume());
  req.on('error', () => {});
  req.end();
}

function pageError(error: QueryError): TrinoError {
  const message = error.message;
  const name = error.errorName;
  if (name === 'PERMISSION_DENIED') return new TrinoError('forbidden', message, name);
  if (name === 'USER_CANCELED' || name === 'EXCEEDED_TIME_LIMIT') return new TrinoError('timeout', message, name);
  if (error.errorType === 'USER_ERROR') return new TrinoError('invalid', message, name);
  return new TrinoError('unavailable', `Trino failed the query (${name}): ${message}`, name);
}

/** HTTP-level failures: a refused token, or a Trino that cannot be reached or answers with a server error. */
function transportError(err: unknown, url: string): TrinoError {
  const e = err as { response?: { status?: number; data?: unknown }; code?: string; message?: string };
  const status = e.response?.status;
  if (status === 401) return new TrinoError('unauthenticated', 'Trino refused the token (invalid or expired): sign in again.');
  if (status === 403)
    return new TrinoError('forbidden', `Trino refused the request: ${String(e.response?.data ?? 'forbidden').slice(0, 300)}`);
  if (status !== undefined) return new TrinoError('unavailable', `Trino answered HTTP ${status}.`);
  return new TrinoError('unavailable', `Trino at ${url} cannot be reached (${e.code ?? e.message ?? 'no answer'}).`);
}

/** A Trino identifier, quoted. */
export const quoteIdent = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;
/** A Trino string literal. */
export const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;
