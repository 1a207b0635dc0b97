import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { QueryEngine } from '../../src/explore/engines/types.ts';
import { MAX_PAGE_BYTES } from '../../src/platform/dashboard-pages.ts';
import { readObject } from '../../src/platform/objects/index.ts';
import { as, exploreHarness, type ExploreHarness, type ExploreIdentity } from './explore.ts';
import { HOSTILE_LIMIT, hostileStatement } from './hostile-sql.ts';
import { startScriptedGateway, type ScriptedGateway } from './scripted-gateway.ts';

// The property behind redaction, through POST /query: whatever statement the model writes, an analyst (who may read
// customer but sees no personal data) never receives a personal value, in the answer or in the published page. Each
// statement is refused (403, 413, 422), or answered with every trace of a personal value masked; a 5xx is a bug.
// `leaks(text)` says whether a text holds a personal value of the engine's data; `tokens` are the callers' tokens
// (Trino runs every statement as its caller). With a `twin`, an engine holding the same data but other personal
// values, every statement is asked of both, and the answers must be the same: a statement that used a personal
// value anywhere (a condition, a join, a grouping, an order) would tell the two apart.
export type PropertyRun = {
  runs: number;
  seed: number;
  engine: () => Promise<QueryEngine>;
  /**
   * The same data with other personal values: another engine, or (on Trino, whose data cannot be changed) the same
   * engine asked as another masked user to whom Trino's own column masks show other values.
   */
  twin?: {
    engine: () => Promise<QueryEngine>;
    as?: ExploreIdentity;
    /** Trino may return other rows for an unordered LIMIT from one run to the next: compare what cannot vary. */
    unorderedRowsVary?: boolean;
  };
  /** Who asks on the first engine; an analyst (ana) by default. */
  as?: ExploreIdentity;
  leaks: (text: string) => boolean;
  tokens?: Record<string, string>;
};

/**
 * What an answer tells that no run of the same statement changes on an engine that returns any rows an unordered
 * LIMIT allows: the rows as they come under a final ORDER BY, as a set when the LIMIT did not cut, else only their
 * number.
 */
const settledPart = (res: { status: number; body: Record<string, unknown> }) => {
  const { preview_rows: rows, ...rest } = told(res) as { preview_rows?: unknown[][] };
  if (!rows) return rest;
  const ordered = /\bORDER BY\b[^()]*$/i.test(String(res.body.sql).replace(/\s*LIMIT \d+\s*$/i, ''));
  if (ordered) return { ...rest, rows };
  return rows.length < HOSTILE_LIMIT ? { ...rest, rows: rows.map((r) => JSON.stringify(r)).sort() } : rest;
};

/** What an answer tells the caller, without what differs from one request to the next. */
const told = (res: { status: number; body: Record<string, unknown> }) => {
  const { requestId: _r, dashboard_id: _d, dashboard_url: _u, ...rest } = res.body ?? {};
  return { status: res.status, ...rest };
};

export function noPersonalValueReachesAnAnalyst(run: PropertyRun): void {
  let gw: ScriptedGateway;
  let h: ExploreHarness;
  let twin: ExploreHarness | undefined;
  let statement = '';
  beforeAll(async () => {
    gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => `\`\`\`sql\n${statement}\n\`\`\`` });
    const harness = async (engine: QueryEngine) => {
      const made = await exploreHarness(
        { SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', SVC_QUERY_TIMEOUT_MS: '20000' },
        { engine, ...(run.tokens ? { tokens: run.tokens } : {}) },
      );
      // Usage limits are tests/unit/limits.test.ts's subject; here every generated statement must reach the engine.
      made.deps.limiter = { charge: async () => {} };
      return made;
    };
    h = await harness(await run.engine());
    if (run.twin) twin = await harness(await run.twin.engine());
  }, 300_000);
  afterAll(async () => {
    await h?.close();
    await twin?.close();
    await gw?.close();
  });

  const analyst = run.as ?? as.analyst;
  const ask = async (sql: string, who = analyst, on: ExploreHarness = h) => {
    statement = sql;
    return on.ask(who, { question: 'customer contacts per nation', force: true });
  };

  it('sees a personal value where one is shown (the check can fail): an administrator reads the raw column', async () => {
    const res = await ask('SELECT c_name, c_phone FROM tpch.tiny.customer LIMIT 3', as.admin);
    expect(res.status).toBe(200);
    expect(run.leaks(JSON.stringify(res.body))).toBe(true);
  });

  it('tells the twin engines apart where a personal value decides the answer (the check can fail): an administrator', async () => {
    if (!twin) return;
    // a bypass role of the same users sees the values each side holds
    const sql = "SELECT count(*) AS n FROM tpch.tiny.customer c WHERE c.c_name LIKE '%ǀ'";
    const raw = (who: ExploreIdentity) => ({ ...who, role: 'svc-engineer' });
    expect(told(await ask(sql, raw(run.twin?.as ?? analyst), twin))).not.toEqual(told(await ask(sql, raw(analyst))));
  });

  it(`holds for ${run.runs} generated statements (seed ${run.seed})`, async () => {
    const outcomes: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(hostileStatement(), async (sql) => {
        const res = await ask(sql);
        outcomes[res.status] = (outcomes[res.status] ?? 0) + 1;
        expect([200, 403, 413, 422], `${res.status} for ${sql}: ${JSON.stringify(res.body)}`).toContain(res.status);
        expect(run.leaks(JSON.stringify(res.body)), `personal value in the answer to ${sql}`).toBe(false);
        if (res.body?.dashboard_id) {
          // the page is stored after the answer: the launch answer waits for it
          expect((await h.call('GET', `/dashboards/${res.body.dashboard_id}/launch`, analyst)).status).toBe(200);
          const page = await readObject(h.deps.pages, `${res.body.dashboard_id}.html`, MAX_PAGE_BYTES);
          expect(run.leaks(page!.toString('utf8')), `personal value in the page of ${sql}`).toBe(false);
        }
        if (twin) {
          const settled = run.twin?.unorderedRowsVary ? settledPart : told;
          const other = await ask(sql, run.twin?.as ?? analyst, twin);
          expect(settled(other), `the answer to ${sql} depends on personal values`).toEqual(settled(res));
        }
      }),
      { seed: run.seed, numRuns: run.runs, endOnFailure: true },
    );
    // the property is worth little if nothing ran: enough statements must have been answered
    expect(outcomes[200] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(run.runs / 10);
  }, 1_800_000);
}
