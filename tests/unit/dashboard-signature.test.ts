import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signDashboard, verifyDashboard, verifyLegacyDashboard } from '../../src/platform/dashboard-signature.ts';

describe('dashboard signatures', () => {
  const body = '<html><body><h1>Customers per nation</h1></body></html>\n';
  const page = { id: 'd-1', owner: 'olivia' };

  it('signs with a first line that verifies', () => {
    const file = signDashboard(body, 'k1', page);
    expect(file.split('\n')[0]).toMatch(/^# SVC_SIG: [0-9a-f]{64}$/);
    expect(verifyDashboard(file, { current: 'k1' }, page)).toEqual({ ok: true, body, key: 'current' });
  });

  it('refuses a file changed by one byte, a missing signature and a wrong key', () => {
    const file = signDashboard(body, 'k1', page);
    const tampered = file.replace('Customers', 'Customerz');
    expect(verifyDashboard(tampered, { current: 'k1' }, page).ok).toBe(false);
    expect(verifyDashboard(body, { current: 'k1' }, page)).toEqual({ ok: false, reason: 'the file has no signature line' });
    expect(verifyDashboard(file, { current: 'k2' }, page).ok).toBe(false);
  });

  it("binds the page to its dashboard and owner: another dashboard's page, or another owner's, does not verify", () => {
    const file = signDashboard(body, 'k1', page);
    expect(verifyDashboard(file, { current: 'k1' }, { id: 'd-2', owner: 'olivia' }).ok).toBe(false);
    expect(verifyDashboard(file, { current: 'k1' }, { id: 'd-1', owner: 'oscar' }).ok).toBe(false);
    // names are not run together: ("d-1", "olivia") is not ("d-1o", "livia")
    expect(verifyDashboard(signDashboard(body, 'k1', { id: 'd-1o', owner: 'livia' }), { current: 'k1' }, page).ok).toBe(false);
  });

  it('accepts only the signature line it writes: no trailing junk, odd nibble, upper case, spaces or CR', () => {
    const file = signDashboard(body, 'k1', page);
    const [line, ...rest] = file.split('\n');
    const hex = line!.slice('# SVC_SIG: '.length);
    for (const bad of [`${hex}ZZ<script>`, `${hex}0`, hex.toUpperCase(), `${hex} `, `${hex}\r`, ` ${hex}`, hex.slice(0, -1)]) {
      expect(verifyDashboard([`# SVC_SIG: ${bad}`, ...rest].join('\n'), { current: 'k1' }, page)).toMatchObject({ ok: false });
    }
  });

  it('accepts the previous key during a rotation, and only while it is configured', () => {
    const old = signDashboard(body, 'k1', page);
    expect(verifyDashboard(old, { current: 'k2', old: 'k1' }, page)).toMatchObject({ ok: true, key: 'old' });
    expect(verifyDashboard(old, { current: 'k2' }, page).ok).toBe(false);
  });

  it('reads a page signed the earlier way (bytes only) only through the legacy check', () => {
    const legacy = signDashboard(body, 'k1', page).replace(/^# SVC_SIG: [0-9a-f]{64}/, `# SVC_SIG: ${legacyMac('k1', body)}`);
    expect(verifyDashboard(legacy, { current: 'k1' }, page).ok).toBe(false);
    expect(verifyLegacyDashboard(legacy, { current: 'k1' })).toMatchObject({ ok: true, body });
  });

  it('will not sign without a key', () => {
    expect(() => signDashboard(body, '', page)).toThrow(/SVC_DASHBOARD_HMAC_KEY/);
  });
});

// How pages were signed before signatures named their dashboard.
const legacyMac = (key: string, body: string) => createHmac('sha256', key).update(body, 'utf8').digest('hex');
