// Token verification benchmark, in one run: what svc's verifier costs per request with warm keys (target: p50 under
// 50 µs), for each accepted algorithm, next to jose's bare jwtVerify on a local key set (the floor: the same
// signature check without discovery, key cache, claim mapping or role filtering). Keys come from a tiny OpenID
// provider over real HTTP on loopback (tests/support/oidc-issuer.ts). "new token": a token the service has not
// seen (signature checked); "same token again": the next request of a session (the verified-token cache answers).
// Run: npx tsx bench/auth/index.ts [--iterations 5000]
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createTokenVerifier } from '../../src/platform/auth/index.ts';
import { oidcSettings, startTestIssuer, type SigningAlg } from '../../tests/support/oidc-issuer.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('iterations', '5000'));
const WARM = 500;
const KNOWN_ROLES = ['svc-admin', 'svc-engineer', 'svc-analyst', 'svc-user', 'svc-viewer'];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const us = (ms: number) => `${(ms * 1000).toFixed(1).padStart(7)} µs`;

async function timeEach(warm: string[], tokens: string[], run: (token: string) => Promise<unknown>): Promise<number[]> {
  for (const t of warm) await run(t);
  const times: number[] = [];
  for (const t of tokens) {
    const started = performance.now();
    await run(t);
    times.push(performance.now() - started);
  }
  return times;
}

async function main() {
  const issuer = await startTestIssuer();
  const keys = { RS256: issuer.keys[0]!, ES256: await issuer.addKey('ES256'), EdDSA: await issuer.addKey('EdDSA') };
  const settings = oidcSettings(issuer.url);
  const verifier = createTokenVerifier({ settings: { ...settings, tokenCacheSize: 4 * (N + WARM) }, knownRoles: () => KNOWN_ROLES });
  if (!(await verifier.warm())) throw new Error('the test issuer did not answer');
  const localSet = createLocalJWKSet({ keys: issuer.keys.map((k) => k.jwk) });
  const joseOptions = { issuer: issuer.url, audience: 'svc', algorithms: ['RS256', 'ES256', 'EdDSA'], clockTolerance: 30 };

  const rows: string[][] = [];
  let worstP50 = 0;
  for (const alg of ['RS256', 'ES256', 'EdDSA'] as SigningAlg[]) {
    const key = keys[alg as keyof typeof keys];
    const sign = (n: number, prefix: string) =>
      Promise.all(Array.from({ length: n }, (_, i) => issuer.sign({ preferred_username: `user-${i}`, jti: `${prefix}-${i}` }, { key })));
    const [warm, tokens] = [await sign(WARM, 'warm'), await sign(N, 'timed')];
    const svc = await timeEach(warm, tokens, (t) => verifier.verify(t));
    const again = await timeEach(warm, tokens, (t) => verifier.callerFrom(new Headers({ 'X-Auth-Request-Access-Token': t })));
    const bare = await timeEach(warm, tokens, (t) => jwtVerify(t, localSet, joseOptions));
    worstP50 = Math.max(worstP50, pct(svc, 50));
    rows.push([
      alg,
      us(pct(svc, 50)),
      us(pct(svc, 99)),
      us(pct(again, 50)),
      us(pct(bare, 50)),
      us(pct(bare, 99)),
      `${(pct(svc, 50) / pct(bare, 50)).toFixed(2)}x`,
    ]);
  }
  await issuer.close();

  const head = ['alg', 'new token p50', 'new token p99', 'same token again p50', 'jose bare p50', 'jose bare p99', 'new / jose p50'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  console.log(`token verification with warm keys, ${N} distinct tokens per algorithm (Node ${process.version})`);
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  console.log(
    `target p50 < 50 µs for a new token: ${worstP50 * 1000 < 50 ? 'met' : 'not met'} (worst ${us(worstP50).trim()}); key set fetches: ${verifier.keys.fetches}`,
  );
}

await main();
