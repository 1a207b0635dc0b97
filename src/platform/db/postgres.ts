import postgres from 'postgres';
import { parseInt8, type Database, type PgConnection, type Sql } from './types.ts';

// A real PostgreSQL with pgvector through postgres.js: a pool, and the same result types as the PGlite adapter.
export function openPostgres(conn: PgConnection): Database {
  const sql = postgres({
    host: conn.host,
    port: conn.port,
    database: conn.database,
    username: conn.user,
    ...(conn.password !== undefined ? { password: conn.password } : {}),
    max: conn.max ?? 10,
    connect_timeout: 5,
    onnotice: () => {},
    types: {
      int8: { to: 20, from: [20], serialize: (v: unknown) => String(v), parse: parseInt8 },
      numeric: { to: 1700, from: [1700], serialize: (v: unknown) => String(v), parse: Number },
      // A json/jsonb parameter arrives as JSON text (the port's convention), as PGlite takes it.
      json: {
        to: 3802,
        from: [114, 3802],
        serialize: (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v)),
        parse: (text: string) => JSON.parse(text),
      },
    },
  });
  let closed = false;
  const wrap = (conn: postgres.Sql | postgres.TransactionSql): Sql => ({
    async query<T>(text: string, params: readonly unknown[] = []) {
      return [...(await conn.unsafe(text, params as postgres.ParameterOrJSON<never>[]))] as T[];
    },
    async exec(script: string) {
      await conn.unsafe(script);
    },
  });
  const base = wrap(sql);
  return {
    kind: 'postgres',
    ...base,
    transaction: async (fn) => (await sql.begin((tx) => fn(wrap(tx)))) as Awaited<ReturnType<typeof fn>>,
    async ping() {
      if (closed) return false;
      const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 3000).unref());
      const probe = sql`SELECT 1`.then(
        () => true,
        () => false,
      );
      return Promise.race([probe, timeout]);
    },
    async close() {
      if (closed) return;
      closed = true;
      await sql.end({ timeout: 5 });
    },
  };
}
