import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseBusy, openPglite, sqlState, type Database } from '../../src/platform/db/index.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { trackerHarness, type TrackerHarness } from '../support/tracker.ts';

// The embedded database off the HTTP thread (issue 31, finding 5): a slow statement holds PGlite's worker, never
// the thread that answers every service's requests; a statement past its limit answers its caller at once.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Settles `p` into a flag, so a test can ask whether it has finished without waiting for it. */
const tracked = <T>(p: Promise<T>) => {
  const state = { settled: false, promise: p };
  p.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
};
/** Waits until the database answers again (the late statement has finished), up to `ms`. */
async function untilFree(db: Database, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await db.ping())) {
    if (Date.now() > deadline) throw new Error('the database did not become free');
    await sleep(100);
  }
}

describe('two services on one embedded database, as svc dev runs them', () => {
  let db: Database;
  let retrieval: RetrievalHarness;
  let tracker: TrackerHarness;
  beforeAll(async () => {
    db = await openPglite({});
    retrieval = await retrievalHarness(db);
    tracker = await trackerHarness({ db });
  });
  afterAll(async () => {
    await tracker?.close?.();
    await db?.close();
  });

  it('answers /health of every service promptly while a 5 s statement runs on the database', async () => {
    const slow = tracked(db.query('SELECT pg_sleep(5)'));
    await sleep(200); // the statement is running by now
    for (const app of [retrieval.app, tracker.app]) {
      const res = await app.request('/health');
      expect(res.status).toBe(200);
    }
    // on the calling thread, /health would have waited for the statement to end
    expect(slow.settled).toBe(false);
    await slow.promise;
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});

describe('the worker boundary', () => {
  it('a parameter that cannot cross to the worker fails that call only, and the database goes on', async () => {
    const db = await openPglite({});
    try {
      await expect(db.query('SELECT $1::text AS t', [() => 'x'])).rejects.toThrow(/could not be cloned/);
      await expect(db.transaction((tx) => tx.query('SELECT $1::text AS t', [() => 'x']))).rejects.toThrow(/could not be cloned/);
      expect(await db.query('SELECT $1::text AS t', ['x'])).toEqual([{ t: 'x' }]);
    } finally {
      await db.close();
    }
  });
});

describe('a statement past its time limit', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite({ statementTimeoutMs: 300 });
    await db.exec('CREATE TABLE kept (x int)');
  });
  afterAll(async () => db?.close());

  it('fails its caller at once with 57014, refuses new work with 57P03 until it ends, then the database goes on', async () => {
    const err = await db.query('SELECT pg_sleep(3)').catch((e: unknown) => e);
    expect(sqlState(err)).toBe('57014');
    expect((err as Error).message).toMatch(/longer than 300 ms \(SVC_DB_STATEMENT_TIMEOUT_MS\)/);
    // the statement still runs in the worker (so its caller was not made to wait for it): new calls are refused at
    // once, and /ready would say so
    const refused = await db.query('SELECT 1').catch((e: unknown) => e);
    expect(sqlState(refused)).toBe('57P03');
    expect(isDatabaseBusy(refused)).toBe(true);
    expect(await db.ping()).toBe(false);
    await untilFree(db);
    expect(await db.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
  });

  it('inside a transaction, the timeout rolls the transaction back: nothing it wrote stays', async () => {
    const attempt = db.transaction(async (tx) => {
      await tx.query('INSERT INTO kept VALUES (1)');
      await tx.query('SELECT pg_sleep(2)');
      await tx.query('INSERT INTO kept VALUES (2)');
    });
    await expect(attempt).rejects.toSatisfy((e) => sqlState(e) === '57014');
    await untilFree(db);
    expect(await db.query('SELECT x FROM kept')).toEqual([]);
    // and the database takes transactions again
    await db.transaction((tx) => tx.query('INSERT INTO kept VALUES (3)'));
    expect(await db.query('SELECT x FROM kept')).toEqual([{ x: 3 }]);
  });

  it('a call that waits its turn behind a transaction longer than the limit is refused, not left hanging', async () => {
    let release!: () => void;
    const held = db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      await new Promise<void>((r) => (release = r));
    });
    await sleep(50);
    const err = await db.query('SELECT 1').catch((e: unknown) => e);
    expect(sqlState(err)).toBe('57P03');
    expect((err as Error).message).toMatch(/waited 300 ms/);
    release();
    await held;
    expect(await db.query('SELECT 3 AS three')).toEqual([{ three: 3 }]);
  });
});

describe('the services answer a busy embedded database with 503', () => {
  let db: Database;
  let retrieval: RetrievalHarness;
  let tracker: TrackerHarness;
  beforeAll(async () => {
    db = await openPglite({ statementTimeoutMs: 1000 });
    retrieval = await retrievalHarness(db);
    tracker = await trackerHarness({ db });
  });
  afterAll(async () => {
    await tracker?.close?.();
    await db?.close();
  });

  it('problem+json 503 with Retry-After (retrieval) and TEMPORARILY_UNAVAILABLE (tracker), then 200 again', async () => {
    const slow = db.query('SELECT pg_sleep(4)').catch((e: unknown) => e);
    await sleep(1200); // past the limit: the statement is late
    const res = await retrieval.app.request('/collections', { headers: { 'X-User-Id': who.admin.user, 'X-User-Role': who.admin.roles } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ status: 503, detail: expect.stringMatching(/database is busy/) });
    const search = await tracker.post('experiments/search', { max_results: 10 });
    expect(search.status).toBe(503);
    expect(search.body).toMatchObject({ error_code: 'TEMPORARILY_UNAVAILABLE' });
    expect(sqlState(await slow)).toBe('57014');
    await untilFree(db);
    expect(
      (await retrieval.app.request('/collections', { headers: { 'X-User-Id': who.admin.user, 'X-User-Role': who.admin.roles } })).status,
    ).toBe(200);
  });
});
