import { createHmac, timingSafeEqual } from 'node:crypto';

// Dashboard page files: the first line is `# SVC_SIG: <hex>`, an HMAC-SHA256 over the rest with
// SVC_DASHBOARD_HMAC_KEY. During a key rotation the previous key (SVC_DASHBOARD_HMAC_KEY_OLD) verifies too.
// Shared by explore, which signs, and the dashboards runtime, which verifies.
const PREFIX = '# SVC_SIG: ';

const mac = (key: string, body: string) => createHmac('sha256', key).update(body, 'utf8').digest('hex');

export function signDashboard(body: string, key: string): string {
  if (!key) throw new Error('SVC_DASHBOARD_HMAC_KEY is not set: dashboards cannot be signed');
  return `${PREFIX}${mac(key, body)}\n${body}`;
}

export type Verification = { ok: true; body: string; key: 'current' | 'old' } | { ok: false; reason: string };

export function verifyDashboard(file: string, keys: { current: string; old?: string | undefined }): Verification {
  const newline = file.indexOf('\n');
  const first = newline < 0 ? file : file.slice(0, newline);
  if (!first.startsWith(PREFIX)) return { ok: false, reason: 'the file has no signature line' };
  const given = Buffer.from(first.slice(PREFIX.length).trim(), 'hex');
  const body = newline < 0 ? '' : file.slice(newline + 1);
  for (const [name, key] of [['current', keys.current], ['old', keys.old]] as const) {
    if (!key) continue;
    const expected = Buffer.from(mac(key, body), 'hex');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true, body, key: name };
  }
  return { ok: false, reason: 'the signature does not verify with the current or the previous key' };
}
