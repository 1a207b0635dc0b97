import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from './log.ts';

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

/**
 * The signing keys: SVC_DASHBOARD_HMAC_KEY (and _OLD during a rotation). Without one (embedded defaults) a random
 * key is generated once into the data folder, so explore and the runtime of one `svc dev` agree on it.
 */
export async function dashboardKeys(
  cfg: { DASHBOARD_HMAC_KEY?: string | undefined; DASHBOARD_HMAC_KEY_OLD?: string | undefined },
  dataDir: string,
  logger: Logger,
): Promise<{ current: string; old?: string | undefined }> {
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
