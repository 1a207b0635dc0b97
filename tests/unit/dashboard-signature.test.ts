import { describe, expect, it } from 'vitest';
import { signDashboard, verifyDashboard } from '../../src/platform/dashboard-signature.ts';

describe('dashboard signatures', () => {
  const body = '<html><body><h1>Customers per nation</h1></body></html>\n';

  it('signs with a first line that verifies', () => {
    const file = signDashboard(body, 'k1');
    expect(file.split('\n')[0]).toMatch(/^# SVC_SIG: [0-9a-f]{64}$/);
    expect(verifyDashboard(file, { current: 'k1' })).toEqual({ ok: true, body, key: 'current' });
  });

  it('refuses a file changed by one byte, a missing signature and a wrong key', () => {
    const file = signDashboard(body, 'k1');
    const tampered = file.replace('Customers', 'Customerz');
    expect(verifyDashboard(tampered, { current: 'k1' }).ok).toBe(false);
    expect(verifyDashboard(body, { current: 'k1' })).toEqual({ ok: false, reason: 'the file has no signature line' });
    expect(verifyDashboard(file, { current: 'k2' }).ok).toBe(false);
  });

  it('accepts the previous key during a rotation, and only while it is configured', () => {
    const old = signDashboard(body, 'k1');
    expect(verifyDashboard(old, { current: 'k2', old: 'k1' })).toMatchObject({ ok: true, key: 'old' });
    expect(verifyDashboard(old, { current: 'k2' }).ok).toBe(false);
  });

  it('will not sign without a key', () => {
    expect(() => signDashboard(body, '')).toThrow(/SVC_DASHBOARD_HMAC_KEY/);
  });
});
