import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from './log.ts';

// Dashboard page files: the first line is `# SVC_SIG: <hex>`, an HMAC-SHA256 with SVC_DASHBOARD_HMAC_KEY over what
// the page is: its dashboard's id, its owner and its bytes. A page copied over another dashboard's (or re-attributed
// to another owner) does not verify. During a key rotation the previous key (SVC_DASHBOARD_HMAC_KEY_OLD) verifies
// too. Shared by explore, which signs, and the dashboards runtime, which verifies.
const PREFIX = '# SVC_SIG: ';
// Exactly the line signDashboard writes: 64 lower-case hex digits, nothing before, after or between.
const SIGNATURE_LINE = /^# SVC_SIG: ([0-9a-f]{64})\n/;

/** What a page is signed as: the dashboard it belongs to and who owns it. */
export type PageIdentity = { id: string; owner: string };
export type DashboardKeys = { current: string; old?: string | undefined };

const mac = (key: string, page: PageIdentity, body: string) =>
  createHmac('sha256', key)
    .update(JSON.stringify(['svc-dashboard-page', page.id, page.owner]))
    .update('\n')
    .update(body, 'utf8')
    .digest('hex');
// Pages signed before signatures named their dashboard: the bytes only. Read by `svc dashboards resign` alone.
const legacyMac = (key: string, body: string) => createHmac('sha256', key).update(body, 'utf8').digest('hex');

export function signDashboard(body: string, key: string, page: PageIdentity): string {
  if (!key) throw new Error('SVC_DASHBOARD_HMAC_KEY is not set: dashboards cannot be signed');
  return `${PREFIX}${mac(key, page, body)}\n${body}`;
}

/** The hex signature on a signed page's first line, or undefined when that line is not one. */
export const signatureOf = (file: string): string | undefined => SIGNATURE_LINE.exec(file)?.[1];

export type Verification = { ok: true; body: string; key: 'current' | 'old' } | { ok: false; reason: string };

export function verifyDashboard(file: string, keys: DashboardKeys, page: PageIdentity): Verification {
  return verifyWith(file, keys, (key, body) => mac(key, page, body));
}

/** A page signed by an earlier version (bytes only), for `svc dashboards resign` to sign again with its identity. */
export const verifyLegacyDashboard = (file: string, keys: DashboardKeys): Verification => verifyWith(file, keys, legacyMac);

function verifyWith(file: string, keys: DashboardKeys, sign: (key: string, body: string) => string): Verification {
  const line = SIGNATURE_LINE.exec(file);
  if (!line) return { ok: false, reason: file.startsWith(PREFIX) ? 'the signature line is malformed' : 'the file has no signature line' };
  const given = Buffer.from(line[1]!, 'hex');
  const body = file.slice(line[0].length);
  for (const [name, key] of [
    ['current', keys.current],
    ['old', keys.old],
  ] as const) {
    if (!key) continue;
    if (timingSafeEqual(given, Buffer.from(sign(key, body), 'hex'))) return { ok: true, body, key: name };
  }
  return { ok: false, reason: 'the signature does not verify with the current or the previous key' };
}

/**
 * The signing keys: SVC_DASHBOARD_HMAC_KEY (and _OLD during a rotation). Without one (embedded defaults) a random
 * key is generated once into the data folder, so explore and the runtime of one `svc dev` agree on it.
 */
export async function dashboardKeys(
  cfg: { DASHBOARD_HMAC_KEY?: string | undefined; DASHBOARD_HMAC_KEY_OLD?: string | undefined },
  dataDir: string,
  logger: Logger,
): Promise<DashboardKeys> {
  if (cfg.DASHBOARD_HMAC_KEY) return { current: cfg.DASHBOARD_HMAC_KEY, old: cfg.DASHBOARD_HMAC_KEY_OLD };
  const file = join(dataDir, 'dashboard-hmac.key');
  const existing = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (existing) return { current: existing };
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  await writeFile(file, key, { mode: 0o600, flag: 'wx' }).catch(async () => undefined);
  logger.warn({ file }, 'SVC_DASHBOARD_HMAC_KEY is not set: dashboards are signed with a generated development key');
  return { current: (await readFile(file, 'utf8')).trim() };
}
