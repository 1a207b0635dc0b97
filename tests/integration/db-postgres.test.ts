import { expect, it } from 'vitest';
import { isDatabaseBusy, openDatabase, openPostgres, sqlState } from '../../src/platform/db/index.ts';
import { dbContract } from '../support/db-contract.ts';
import { freshDatabase, openFreshPostgres } from '../support/pg.ts';

dbContract('Postgres', () => openFreshPostgres('db'));

it('openDatabase selects Postgres when PG_HOST is set and applies the platform schema', async () => {
  const fresh = await freshDatabase('db_open');
  const { host, port, database, user, password } = fresh.cfg;
  const db = await openDatabase({
    PG_HOST: host,
    PG_PORT: port,
    PG_DATABASE: database,
    PG_USER: user,
    PG_PASSWORD: password,
    DATA_DIR: '/nonexistent',
  });
  try {
    expect(db.kind).toBe('postgres');
    expect(await db.query(`SELECT extname FROM pg_extension WHERE extname = 'vector'`)).toEqual([{ extname: 'vector' }]);
  } finally {
    await db.close();
    await fresh.drop();
  }
});

it('keeps a statement prepared on its connection unless asked to plan it with its values at each call', async () => {
  const fresh = await freshDatabase('db_plan');
  // One connection, so the session asked about is the one that ran the statements (postgres.js prepares its own
  // catalogue query too: only ours are looked at).
  const db = openPostgres({ ...fresh.cfg, max: 1 });
  const prepared = () =>
    db.query<{ statement: string }>(`SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'SELECT $1::int%'`);
  try {
    for (let i = 0; i < 6; i++) expect(await db.query(`SELECT $1::int + 1 AS n`, [i], { planEachCall: true })).toEqual([{ n: i + 1 }]);
    expect(await prepared()).toEqual([]);
    await db.query(`SELECT $1::int + 2 AS n`, [1]);
    expect((await prepared()).map((r) => r.statement)).toEqual(['SELECT $1::int + 2 AS n']);
  } finally {
    await db.close();
    await fresh.drop();
  }
});

it('ends a statement past SVC_DB_STATEMENT_TIMEOUT_MS with 57014, as embedded PGlite answers, and goes on', async () => {
  const fresh = await freshDatabase('db_timeout');
  const { host, port, database, user, password } = fresh.cfg;
  const db = await openDatabase({
    PG_HOST: host,
    PG_PORT: port,
    PG_DATABASE: database,
    PG_USER: user,
    PG_PASSWORD: password,
    DATA_DIR: '/nonexistent',
    DB_STATEMENT_TIMEOUT_MS: 300,
  });
  try {
    const err = await db.query('SELECT pg_sleep(3)').catch((e: unknown) => e);
    expect(isDatabaseBusy(err)).toBe(true);
    expect(sqlState(err)).toBe('57014');
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  } finally {
    await db.close();
    await fresh.drop();
  }
});

it('fails a transaction whose connection is lost, sends nothing more on it, and serves the next statements', async () => {
  const fresh = await freshDatabase('db_lost');
  const db = openPostgres({ ...fresh.cfg, max: 2 });
  try {
    await db.exec('CREATE TABLE kept (n int)');
    let afterLoss: Promise<unknown> | undefined;
    const failed = db.transaction(async (tx) => {
      await tx.query('INSERT INTO kept VALUES (1)');
      const [{ pid }] = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
      await db.query('SELECT pg_terminate_backend($1)', [pid]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // a statement after the loss is refused, not written to the closed socket (which would end the process)
      afterLoss = tx.query('INSERT INTO kept VALUES (2)');
      await afterLoss;
    });
    await expect(failed).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    while (!afterLoss) await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(afterLoss).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    await new Promise((resolve) => setTimeout(resolve, 50)); // a write postgres.js deferred would have failed by now
    expect(await db.query('SELECT n FROM kept')).toEqual([]);
    for (let i = 0; i < 4; i++) expect(await db.query('SELECT $1::int AS i', [i])).toEqual([{ i }]);
    expect(await db.transaction(async (tx) => tx.query('INSERT INTO kept VALUES (3) RETURNING n'))).toEqual([{ n: 3 }]);
    expect(await db.query('SELECT n FROM kept')).toEqual([{ n: 3 }]);
  } finally {
    await db.close();
    await fresh.drop();
  }
});
