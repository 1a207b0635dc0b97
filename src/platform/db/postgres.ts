import { connect, type OnReadOpts, type Socket } from 'node:net';
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
  const wrap = (c: postgres.Sql | postgres.ReservedSql): Sql => ({
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
    // The output's CopyData messages are taken off the socket before postgres.js sees them (openCopySocket): the
    // stream it makes then carries nothing, and only ends or fails.
    async copyOut(select: string, onChunk: (chunk: Uint8Array) => void, copyOptions: CopyOutOptions = {}) {
      let failed: unknown;
      const deliver = (chunk: Uint8Array) => {
        if (failed !== undefined) return; // the rest is drained, not read
        try {
          onChunk(chunk);
        } catch (error) {
          failed = error;
        }
      };
      const copyConnection = {
        ...options,
        max: 1,
        fetch_types: false, // a query's round trip at each opening, for array types a COPY's raw bytes never need
        connection: { ...options.connection, ...copyOptions.settings },
        socket: () => openCopySocket(conn, deliver),
      };
      const own = postgres(copyConnection);
      try {
        await new Promise<void>((resolve, reject) => {
          const query = own.unsafe(`COPY (${select}) TO STDOUT (FORMAT binary)`) as unknown as {
            resolve(x: unknown): void;
            readable(): Promise<unknown>;
          };
          const resolveQuery = query.resolve;
          query.resolve = (result) => {
            if (result instanceof Readable) {
              result.on('data', deliver);
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
    transaction: (fn) => pipelinedTransaction(sql, wrap, fn),
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

/** What postgres.js's `onexecute` hands over: the connection a statement went out on (not in its types). */
type PooledConnection = { onclose: ((err: unknown) => void) | null; terminate(): void };

/**
 * A transaction on a connection reserved for it, its BEGIN sent with the first statement instead of a round trip
 * before it (postgres.js's sql.begin awaits the BEGIN's answer before it calls back): statements on one connection
 * run in the order they were sent, so whatever `fn` sends runs inside the transaction. As with sql.begin, a statement
 * that failed rolls the transaction back even if `fn` caught its error (the server has aborted the transaction), and
 * a connection lost midway fails it; nothing more is sent on that connection (postgres.js would throw on its closed
 * socket outside any promise), and it goes back to the pool, which reconnects it, without a ROLLBACK (the server
 * rolled back as the connection dropped).
 */
async function pipelinedTransaction<T>(sql: postgres.Sql, wrap: (c: postgres.ReservedSql) => Sql, fn: (tx: Sql) => Promise<T>): Promise<T> {
  const reserved = await sql.reserve();
  let connection: PooledConnection | undefined;
  let lost: unknown;
  let failed: { error: unknown } | undefined;
  let loseConnection!: (err: unknown) => void;
  const connectionLost = new Promise<never>((_, reject) => (loseConnection = reject));
  connectionLost.catch(() => {}); // answered by the races below
  const inner = wrap(reserved);
  const watched =
    <A extends unknown[], R>(statement: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (lost !== undefined) throw lost;
      try {
        return await statement(...args);
      } catch (error) {
        failed ??= { error };
        throw error;
      }
    };
  const tx: Sql = { query: watched(inner.query) as Sql['query'], exec: watched(inner.exec), copyIn: watched(inner.copyIn) };
  const onexecute = (c: PooledConnection) => {
    connection = c;
    c.onclose = (err) => {
      lost = err ?? new Error('the database connection closed during a transaction');
      loseConnection(lost);
    };
    return true; // the connection takes the next statements at once
  };
  const begin = watched(() => reserved.unsafe('BEGIN', [], { onexecute } as postgres.UnsafeQueryOptions).execute())();
  begin.catch(() => {}); // a failed BEGIN fails the transaction below
  try {
    let result: T;
    try {
      result = await Promise.race([fn(tx), connectionLost]);
      await Promise.race([begin, connectionLost]);
      if (failed) throw failed.error;
    } catch (err) {
      if (lost === undefined)
        await reserved.unsafe('ROLLBACK').catch((error: unknown) => {
          // a connection left in an unknown state (a COPY still under way) is closed, never pooled
          lost = error;
          connection?.terminate();
        });
      // a statement after a failed one is refused as "in failed transaction" (25P02): the first failure is the answer
      throw (err as { code?: string })?.code === '25P02' && failed ? failed.error : err;
    }
    const committed = await Promise.race([reserved.unsafe('COMMIT'), connectionLost]);
    // a statement `fn` left running that failed after it returned: the server answered COMMIT with ROLLBACK
    const late = failed as { error: unknown } | undefined; // set by a statement's callback since the check above
    if (late || committed.command !== 'COMMIT') throw late ? late.error : new Error('the transaction was rolled back, not committed');
    return result;
  } finally {
    if (connection) connection.onclose = null;
    if (lost === undefined) reserved.release();
  }
}

const COPY_DATA = 0x64; // 'd'
/** What a COPY's socket reads at once, into one buffer read after read. */
const COPY_READ_BYTES = 256 * 1024;

/**
 * The socket of a connection that runs one COPY TO, read into one buffer reused read after read (net's `onread`): the
 * bytes its CopyData messages carry go to `deliver`, as much as each read holds (about 80 rows of a copy's load in 64
 * KiB), and every other message goes on to postgres.js as a 'data' event, as it came. postgres.js makes a Buffer, a
 * stream chunk and an event of each CopyData message, and the server sends one a row (110 to 165 ms of a
 * 100 000-row load, measured on 11-29); and a fresh buffer a read is 80 MB for the JS heap's collector to account
 * for. A read's CopyData bodies are moved together in place, so `deliver` gets a view valid only during its call;
 * a message cut by a read's end continues in the next. No TLS here: openPostgres sets none.
 */
function openCopySocket(conn: PgConnection, deliver: (bytes: Uint8Array) => void): Promise<Socket> {
  const header = new Uint8Array(5); // type, then the int32 length, which counts itself
  let headerBytes = 0;
  let copyData = false;
  let bodyLeft = 0;
  let socket: Socket | undefined;
  const onRead = (size: number, buffer: Uint8Array): boolean => {
    const read = new Uint8Array(buffer.buffer, buffer.byteOffset, size);
    const passOn: Uint8Array[] = []; // other messages' bytes, copied: the buffer is read into again
    let kept = 0; // CopyData bodies moved to the read's start so far, not yet delivered
    // each side's bytes handed on before the other's that came after them
    const deliverKept = () => {
      if (kept > 0) deliver(read.subarray(0, kept));
      kept = 0;
    };
    const emitPassOn = () => {
      if (passOn.length > 0) socket!.emit('data', Buffer.concat(passOn));
      passOn.length = 0;
    };
    for (let at = 0; at < read.length; ) {
      if (bodyLeft === 0) {
        while (headerBytes < 5 && at < read.length) header[headerBytes++] = read[at++]!;
        if (headerBytes < 5) break;
        headerBytes = 0;
        copyData = header[0] === COPY_DATA;
        bodyLeft = ((header[1]! << 24) | (header[2]! << 16) | (header[3]! << 8) | header[4]!) - 4;
        if (copyData) emitPassOn();
        else {
          deliverKept();
          passOn.push(header.slice());
        }
        if (bodyLeft <= 0) {
          bodyLeft = 0;
          continue;
        }
      }
      const take = Math.min(bodyLeft, read.length - at);
      if (copyData) {
        if (kept !== at) read.copyWithin(kept, at, at + take);
        kept += take;
      } else passOn.push(read.slice(at, at + take));
      at += take;
      bodyLeft -= take;
    }
    deliverKept();
    emitPassOn();
    return true;
  };
  return openSocket(conn, { buffer: Buffer.allocUnsafe(COPY_READ_BYTES), callback: onRead }).then((opened) => (socket = opened));
}

type CopyInQuery = { writable(): Promise<Writable>; reject(error: unknown): void };

/** How long a connection may take to open (TCP only; postgres.js's connect_timeout then covers the sign-in). */
const CONNECT_MS = 5000;

/**
 * A connected socket without Nagle's algorithm, as node-postgres opens them: postgres.js leaves it on, and a COPY's
 * last data and its end, written one after the other, waited for the server's delayed acknowledgement (40 ms a COPY
 * on Linux).
 */
function openSocket(conn: PgConnection, onread?: OnReadOpts): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: conn.host, port: conn.port, noDelay: true, timeout: CONNECT_MS, ...(onread ? { onread } : {}) });
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
