import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Agent, request as httpsRequest } from 'node:https';
import { importPKCS8, SignJWT } from 'jose';
import { createTrinoEngine } from '../../src/explore/engines/trino.ts';
import type { QueryEngine } from '../../src/explore/engines/types.ts';

// The real Trino that scripts/start-trino.sh runs: HTTPS with its own CA, JWT authentication with a key tests hold.
export const TRINO_PORT = Number(process.env.SVC_IT_TRINO_PORT ?? 18443);
export const TRINO_URL = `https://localhost:${TRINO_PORT}`;
const keys = join(
  process.env.SVC_RUN ?? join(process.env.SVC_CACHE ?? join(homedir(), '.cache/svc'), 'run'),
  `trino-${TRINO_PORT}`,
  'keys',
);

export function ensureTrino(): { ca: string } {
  execFileSync('bash', ['scripts/start-trino.sh'], { stdio: 'inherit' });
  return { ca: readFileSync(join(keys, 'ca.pem'), 'utf8') };
}

export async function trinoToken(user: string, expiresIn = '1h'): Promise<string> {
  const key = await importPKCS8(readFileSync(join(keys, 'jwt-private.pem'), 'utf8'), 'RS256');
  // Trino names the user by preferred_username, as in a token Keycloak issues (scripts/start-trino.sh)
  return new SignJWT({ preferred_username: user })
    .setProtectedHeader({ alg: 'RS256' })
    .setSubject(user)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(key);
}

/** Explore's Trino engine on the test server, its metadata read as the service user. */
export async function serviceTrinoEngine(ca: string): Promise<QueryEngine> {
  return createTrinoEngine({
    url: TRINO_URL,
    ca,
    serviceUser: 'svc-service',
    serviceToken: await trinoToken('svc-service'),
    metadataTimeoutMs: 60_000,
  });
}

/** Trino's own client protocol over HTTPS: POST the statement, follow nextUri; the first error page ends it. */
export async function trinoStatement(
  sql: string,
  token: string,
  ca: string,
): Promise<{ status: number; rows: unknown[][]; error?: string }> {
  const agent = new Agent({ ca });
  const call = (url: string, init: { method?: string; body?: string }) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(url);
      const req = httpsRequest(
        {
          hostname: u.hostname,
          port: u.port,
          path: u.pathname + u.search,
          method: init.method ?? 'GET',
          agent,
          headers: { Authorization: `Bearer ${token}` },
        },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end(init.body);
    });
  let page = await call(`${TRINO_URL}/v1/statement`, { method: 'POST', body: sql });
  if (page.status !== 200) return { status: page.status, rows: [] };
  const rows: unknown[][] = [];
  for (;;) {
    const doc = JSON.parse(page.body) as { data?: unknown[][]; error?: { message: string }; nextUri?: string };
    if (doc.data) rows.push(...doc.data);
    if (doc.error) return { status: 200, rows, error: doc.error.message };
    if (!doc.nextUri) return { status: 200, rows };
    page = await call(doc.nextUri, {});
  }
}
