import { connect, type Socket } from 'node:net';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import { answersSoon, DEFAULT_STATEMENT_TIMEOUT_MS } from './timeout.ts';
import type { CopyOutOptions, Database, PgConnection, QueryOptions, Sql } from './types.ts';
import { OID, parseBytea, parseInt8, parseNumeric, parseTimestamp, serializeJson } from './values.ts';

const asText = (v: unknown) => String(v);

// Result types aligned with PGlite (see types.ts); postgres.js derives the array types from these.
const types = {
  int8: { to: OID.int8, from: [OID.int8], serialize: asText, parse: parseInt8 },
  numeric: { to: OID.numeric, from: [OID.numeric], serialize: asText, parse: parseNumeric },
  timestamp: {
    to: OID.timestamp,
    from: [OID.timestamp],
    serialize: (v: unknown) => (v instanceof Date ? v.toISOString() : String(v)),
    parse: parseTimestamp,
  },
  bytea: {
    to: OID.bytea,
    from: [OID.bytea],
    serialize: (v: unknown) => (v instanceof Uint8Array ? `\\x${Buffer.from(v).toString('hex')}` : String(v)),
    parse: parseBytea,
  },
  json: { to: OID.jsonb, from: [OID.json, OID.jsonb], serialize: serializeJson, parse: (t: string) => JSON.parse(t) },
};

// `simple: false` keeps a parameterless query on the extended protocol, so it runs one statement, as on PGlite.
// Statements with parameters are prepared once per connection (measured 2.5x faster for small queries); text
// without parameters is more often built on the fly, so it is not cached. An unprepared (unnamed) statement is
// planned with its values at each call (QueryOptions.planEachCall).
const oneStatement = { simple: false, prepare: false } as postgres.UnsafeQueryOptions;
const prepared = { simple: false, prepare: true } as postgres.UnsafeQueryOptions;

// A real PostgreSQL with pgvector through postgres.js: a pool of `max` connections (10 by default).
export function openPostgres(conn: PgConnection): Database {
  const options = {
    host: conn.host,
    port: conn.port,
    database: conn.database,
    username: conn.user,
    ...(conn.password !== undefined ? { password: conn.password } : {}),
    max: conn.max ?? 10,
    connect_timeout: 5,
    idle_timeout: 60,
    onnotice: () => {},
    transform: { undefined: null },
    connection: { application_name: 'svc', TimeZone: 'UTC', statement_timeout: conn.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS },
    types,
    socket: () => openSocket(conn),
  };
  const sql = postgres(options);
  let closed = false;
  const wrap = (c: postgres.Sql | postgres.TransactionSql): Sql => ({
    async query<T>(text: string, params: readonly unknown[] = [], opts: QueryOptions = {}) {
      const options = params.length > 0 && !opts.planEachCall ? prepared : oneStatement;
      const rows = await c.unsafe(text, params as postgres.ParameterOrJSON<never>[], options);
      return Array.from(rows) as T[];
    },
    async exec(script: string) {
      await c.unsafe(script);
    },
    // postgres.js resolves the query with the input stream when the server is ready for it, and settles nothing
    // after: an error the server sends once the input has ended (a row a constraint refuses) reaches only the
    // query's reject, wrapped here, while the stream never finishes.
    async copyIn(target: string, input: Iterable<Uint8Array>) {
      const query = c.unsafe(`COPY ${target} FROM STDIN (FORMAT binary)`) as unknown as CopyInQuery;
      await new Promise<void>((resolve, reject) => {
        const rejectQuery = query.reject;
        query.reject = (error) => {
          reject(error);
          rejectQuery(error);
        };
        query
          .writable()
          .then((stream) => pipeline(Readable.from(input), stream))
          .then(resolve, reject);
      });
    },
  });
  const base = wrap(sql);
  return {
    kind: 'postgres',
    query: base.query,
    exec: base.exec,
    copyIn: base.copyIn,
    // On a connection of its own, closed afterwards: postgres.js 3.4 can leave a connection's socket paused after
    // a COPY whose last data and CopyDone arrive together while the stream is full (porsager/postgres#1016), and
    // the next query on it would never return. The stream's listeners go on as postgres.js creates it (through the
    // query's resolve, which its own cursors replace too): an error in the first packet is emitted on the next
    // tick, before an awaited readable() could listen, and an 'error' without a listener would end the process.
    async copyOut(select: string, onChunk: (chunk: Uint8Array) => void, copyOptions: CopyOutOptions = {}) {
      const own = postgres({ ...options, max: 1, connection: { ...options.connection, ...copyOptions.settings } });
      try {
        await new Promise<void>((resolve, reject) => {
          let failed: unknown;
          const query = own.unsafe(`COPY (${select}) TO STDOUT (FORMAT binary)`) as unknown as {
            resolve(x: unknown): void;
            readable(): Promise<unknown>;
          };
          const resolveQuery = query.resolve;
          query.resolve = (result) => {
            if (result instanceof Readable) {
              result.on('data', (chunk: Uint8Array) => {
                if (failed !== undefined) return; // the rest is drained, not read
                try {
                  onChunk(chunk);
                } catch (error) {
                  failed = error;
                }
              });
              result.on('error', reject);
              result.on('end', () => (failed === undefined ? resolve() : reject(failed)));
            }
            resolveQuery(result);
          };
          query.readable().catch(reject); // refused before any output: a bad statement, a lost connection
        });
      } finally {
        await own.end({ timeout: 0 });
      }
    },
    // The callback's promise is handed back as one value (an array result would otherwise be awaited item by item).
    async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
      const [result] = (await sql.begin(async (tx) => [await fn(wrap(tx))])) as [T];
      return result;
    },
    async ping() {
      if (closed) return false;
      return answersSoon(sql`SELECT 1`);
    },
    async close() {
      if (closed) return;
      closed = true;
      await sql.end({ timeout: 5 });
    },
  };
}

type CopyInQuery = { writable(): Promise<Writable>; reject(error: unknown): void };

/** How long a connection may take to open (TCP only; postgres.js's connect_timeout then covers the sign-in). */
const CONNECT_MS = 5000;

/**
 * A connected socket without Nagle's algorithm, as node-postgres opens them: postgres.js leaves it on, and a COPY's
 * last data and its end, written one after the other, waited for the server's delayed acknowledgement (40 ms a COPY
 * on Linux).
 */
function openSocket(conn: PgConnection): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: conn.host, port: conn.port, noDelay: true, timeout: CONNECT_MS });
    socket.once('error', reject);
    socket.once('timeout', () => socket.destroy(new Error(`connect ETIMEDOUT ${conn.host}:${conn.port}`)));
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.removeAllListeners('timeout');
      socket.off('error', reject);
      resolve(socket);
    });
  });
}
