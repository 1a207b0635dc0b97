import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, type ExploreHarness, type ExploreIdentity } from './explore.ts';
import { startScriptedGateway, type ScriptedGateway } from './scripted-gateway.ts';

// A hostile caller steering the model, on either engine (the unit suite runs this on the embedded sample, the
// integration suite on Trino, whose tpch.tiny holds the same rows): the statement the engine runs names every
// relation as validation resolved it, reads no catalog, and masks personal columns where they are read, so no
// clause can use a personal value as an oracle. Each case is checked against an administrator, who sees the raw
// values, so that a check that cannot fail is caught.
const PERSONAL = /Customer#|Supplier#|\d{2}-\d{3}-\d{3}-\d{4}/;
const DIGITS = `(VALUES ${[...'0123456789'].map((d) => `('${d}')`).join(', ')})`;

/** The analyst's masked phone numbers rebuilt digit by digit with joins, as the issue's attack did (12 positions). */
const PHONE_ORACLE = (() => {
  const positions = [1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 15];
  const joins = positions.map((p, i) => `JOIN ${DIGITS} AS d${i}(v) ON substr(c.c_phone, ${p}, 1) = d${i}.v`).join(' ');
  return `SELECT c.c_custkey, ${positions.map((_, i) => `d${i}.v`).join(' || ')} AS digits FROM tpch.tiny.customer c ${joins} ORDER BY c.c_custkey LIMIT 5`;
})();

export function exploreHostileContract(make: (env?: Record<string, string>) => Promise<ExploreHarness>): void {
  describe('a hostile caller steering the model', () => {
    let gw: ScriptedGateway;
    let h: ExploreHarness;
    let statement = '';
    beforeAll(async () => {
      gw = await startScriptedGateway({ models: ['svc-chat'], chat: () => `\`\`\`sql\n${statement}\n\`\`\`` });
      h = await make({ SVC_LLM_URL: gw.url, SVC_LLM_MODEL: 'svc-chat', SVC_COST_GATE: 'false' });
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      await gw?.close();
    });
    const ask = async (sql: string, who: ExploreIdentity = as.analyst, question = 'customer contacts per nation') => {
      statement = sql;
      return h.ask(who, { question, force: true });
    };

    describe('FROM ONLY: the engine reads the relation validation approved', () => {
      it('refuses a table named `only` that does not exist, instead of reading customer unmasked', async () => {
        const res = await ask('SELECT c_name, c_phone FROM ONLY customer LIMIT 5');
        expect(res.status).toBe(422);
        expect(res.body.detail).toMatch(/only/);
        expect(JSON.stringify(res.body)).not.toMatch(PERSONAL);
      });

      it('reads the WITH query named `only`, as the policy checked it, not the table behind it', async () => {
        const res = await ask('WITH only AS (SELECT n_name AS c_name FROM tpch.tiny.nation) SELECT c_name FROM ONLY customer');
        expect(res.status).toBe(200);
        expect(res.body.reasoning.tables_used).toEqual(['tpch.tiny.nation']);
        expect(res.body.row_count).toBe(25);
        expect(res.body.preview_rows).toContainEqual(['GERMANY']);
        expect(JSON.stringify(res.body)).not.toMatch(PERSONAL);
      });
    });

    describe('catalog and system relations', () => {
      it.each([
        "SELECT histogram_bounds FROM pg_stats WHERE attname = 'c_phone'",
        'SELECT tablename, attname, most_common_vals FROM pg_stats',
        'SELECT relname FROM pg_class',
        'SELECT attname FROM pg_attribute',
        'SELECT rolname FROM pg_roles',
        'SELECT name, setting FROM pg_settings',
        'SELECT * FROM pg_catalog.pg_stats',
        'SELECT * FROM tpch.pg_catalog.pg_stats',
        'SELECT table_name FROM information_schema.columns',
        'SELECT * FROM tpch.information_schema.tables',
        'SELECT query FROM system.runtime.queries',
        'SELECT * FROM tpch.tiny."customer$partitions"',
        'SELECT * FROM tpch.tiny."customer$files"',
        'SELECT * FROM iceberg.system.iceberg_tables',
      ])('refuses %j and shows nothing of it', async (sql) => {
        const res = await ask(sql, as.admin);
        expect([403, 422]).toContain(res.status);
        expect(JSON.stringify(res.body)).not.toMatch(PERSONAL);
      });

      it('names a catalog relation written in full as such, with 403', async () => {
        const res = await ask('SELECT * FROM pg_catalog.pg_stats', as.admin);
        expect(res.status).toBe(403);
        expect(res.body.detail).toMatch(/pg_catalog\.pg_stats, a catalog or system relation/);
      });

      it("refuses a table format's metadata table (each file's lowest and highest values), with 403", async () => {
        const res = await ask('SELECT file_path, lower_bounds FROM tpch.tiny."customer$files"', as.admin);
        expect(res.status).toBe(403);
        expect(res.body.detail).toMatch(/customer\$files, a catalog or system relation/);
      });
    });

    describe('conditions on personal columns see the mask', () => {
      it('rebuilds no phone number digit by digit through joins (an administrator gets them all)', async () => {
        const admin = await ask(PHONE_ORACLE, as.admin);
        expect(admin.status).toBe(200);
        expect(admin.body.row_count).toBe(5);
        const analyst = await ask(PHONE_ORACLE);
        expect(analyst.status).toBe(200);
        expect(analyst.body.row_count).toBe(0);
      });

      it.each([
        ['WHERE', "SELECT count(*) AS n FROM tpch.tiny.customer WHERE c_name = 'Customer#000000001'", [[1]], [[0]]],
        ['LIKE', "SELECT count(*) AS n FROM tpch.tiny.customer WHERE c_phone LIKE '1%'", 'some', [[0]]],
        ['IN', "SELECT count(*) AS n FROM tpch.tiny.customer WHERE substr(c_phone, 1, 2) IN ('10', '11', '12')", 'some', [[0]]],
        [
          'EXISTS',
          "SELECT count(*) AS n FROM tpch.tiny.nation x WHERE EXISTS (SELECT 1 FROM tpch.tiny.customer c WHERE c.c_nationkey = x.n_nationkey AND c.c_address LIKE '%a%')",
          'some',
          [[0]],
        ],
        ['GROUP BY', 'SELECT count(*) AS n FROM (SELECT c_phone FROM tpch.tiny.customer GROUP BY c_phone) g', [[1500]], [[1]]],
        [
          'JOIN ON',
          'SELECT count(*) AS n FROM tpch.tiny.customer a JOIN tpch.tiny.customer b ON a.c_name = b.c_name',
          [[1500]],
          [[2250000]],
        ],
        [
          'ORDER BY',
          'SELECT count(*) AS n FROM (SELECT c_custkey, row_number() OVER (ORDER BY c_phone, c_custkey) AS r FROM tpch.tiny.customer) o WHERE r = c_custkey',
          'some',
          [[1500]],
        ],
        ['a function', 'SELECT count(*) AS n FROM tpch.tiny.customer WHERE length(c_address) > 20', 'some', [[0]]],
      ])('%s: the analyst counts what the mask gives, the administrator the data', async (_clause, sql, raw, masked) => {
        const admin = await ask(sql, as.admin);
        expect(admin.status).toBe(200);
        if (raw === 'some') expect(admin.body.preview_rows).not.toEqual(masked);
        else expect(admin.body.preview_rows).toEqual(raw);
        const analyst = await ask(sql);
        expect(analyst.status).toBe(200);
        expect(analyst.body.preview_rows).toEqual(masked);
      });
    });

    it('names only candidate tables the caller may read', async () => {
      const res = await ask('SELECT count(*) AS n FROM tpch.tiny.nation', as.analyst, 'supplier account balance per nation');
      expect(res.status).toBe(200);
      expect(res.body.reasoning.candidate_tables).not.toContain('tpch.tiny.supplier');
      expect(res.body.reasoning.candidate_tables).toContain('tpch.tiny.nation');
      const admin = await ask('SELECT count(*) AS n FROM tpch.tiny.nation', as.admin, 'supplier account balance per nation');
      expect(admin.body.reasoning.candidate_tables).toContain('tpch.tiny.supplier');
    });
  });
}
