import { beforeAll, describe, expect, it } from 'vitest';
import { ensureTrino, trinoStatement, trinoToken } from '../support/trino.ts';

// The real Trino the explore integration tests will run on, configured as production: HTTPS, JWT, file-based
// access control with a row filter, a column mask and a denied table for the analyst `ana`.
describe('Trino test server', () => {
  let ca = '';
  beforeAll(() => {
    ({ ca } = ensureTrino());
  }, 300_000);

  it('applies the analyst row filter that the administrator does not have', async () => {
    const sql = 'SELECT count(*) FROM tpch.tiny.orders';
    const analyst = await trinoStatement(sql, await trinoToken('ana'), ca);
    const admin = await trinoStatement(sql, await trinoToken('ada'), ca);
    expect(admin.rows).toEqual([[15000]]);
    expect((analyst.rows[0]![0] as number) < 15000).toBe(true);
    expect((analyst.rows[0]![0] as number) > 0).toBe(true);
  });

  it("masks the analyst's c_phone and denies supplier", async () => {
    const masked = await trinoStatement('SELECT c_phone FROM tpch.tiny.customer ORDER BY c_custkey LIMIT 1', await trinoToken('ana'), ca);
    expect(masked.rows[0]![0]).toMatch(/^XX-XXX-XXX-\d{4}$/);
    const denied = await trinoStatement('SELECT count(*) FROM tpch.tiny.supplier', await trinoToken('ana'), ca);
    expect(denied.error).toMatch(/Access Denied/);
  });

  it('takes the user from the token and refuses a bad or expired token with 401', async () => {
    const who = await trinoStatement('SELECT current_user', await trinoToken('abe'), ca);
    expect(who.rows).toEqual([['abe']]);
    expect((await trinoStatement('SELECT 1', 'not.a.token', ca)).status).toBe(401);
    expect((await trinoStatement('SELECT 1', await trinoToken('ana', '-1m'), ca)).status).toBe(401);
  });
});
