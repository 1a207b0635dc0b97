import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { compactVerify, decodeProtectedHeader, SignJWT } from 'jose';
import type { Files } from './tar.ts';
import { lookupTable } from '../lookup-table.ts';

// OPA's bundle signature, so that `opa` verifies what svc signs and svc verifies what `opa sign` signs: the bundle
// holds `.signatures.json` = {"signatures": [<one JWT>]}, whose payload lists every other file with its digest
// ({"files": [{"name", "hash", "algorithm"}], "keyid"}). A JSON file (data.json, .manifest) is digested over
// OPA's canonical form, not its bytes: objects with sorted keys, no spaces, numbers as written (OPA's
// bundle/hash.go); any other file over its bytes. No scope is written, and one is refused (OPA compares it with
// the configured scope, empty here).

export const SIGNATURES_FILE = '.signatures.json';

export class BundleSignatureError extends Error {
  override name = 'BundleSignatureError';
}

type SignedFile = { name: string; hash: string; algorithm: string };

const DIGESTS: Record<string, string> = lookupTable({ 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' });
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

/** The JWT for `.signatures.json`, over every file of the bundle but that one. RS256 for RSA keys, ES256/ES384 for EC. */
export async function signFiles(files: Files, opts: { privateKeyPem: string; keyId: string; algorithm?: string }): Promise<string> {
  const key = createPrivateKey(opts.privateKeyPem);
  const alg = opts.algorithm ?? defaultAlgorithm(key);
  const signed: SignedFile[] = [...files.keys()]
    .filter((name) => name !== SIGNATURES_FILE)
    .sort()
    .map((name) => ({ name, hash: digest(name, files.get(name)!, 'SHA-256'), algorithm: 'SHA-256' }));
  return new SignJWT({ files: signed, keyid: opts.keyId }).setProtectedHeader({ alg, kid: opts.keyId, typ: 'JWT' }).sign(key);
}

/** The `.signatures.json` text for that JWT. */
export const signaturesJson = (jwt: string): Uint8Array => new TextEncoder().encode(`${JSON.stringify({ signatures: [jwt] })}\n`);

/**
 * Throws unless `.signatures.json` holds exactly one JWT that the public key verifies, and the files it lists are
 * exactly the bundle's other files with those digests. `keyId`, when given, must be the one the JWT names.
 */
export async function verifyFiles(files: Files, opts: { publicKey: KeyObject; keyId?: string | undefined }): Promise<void> {
  const raw = files.get(SIGNATURES_FILE);
  if (!raw) throw new BundleSignatureError('the bundle is not signed: it has no .signatures.json');
  let signatures: unknown;
  try {
    signatures = (JSON.parse(new TextDecoder().decode(raw)) as { signatures?: unknown }).signatures;
  } catch {
    throw new BundleSignatureError('.signatures.json is not JSON');
  }
  if (!Array.isArray(signatures) || signatures.length !== 1 || typeof signatures[0] !== 'string') {
    throw new BundleSignatureError('.signatures.json must hold exactly one JWT');
  }
  const jwt = signatures[0];
  let payload: { files?: unknown; keyid?: unknown; scope?: unknown };
  try {
    const header = decodeProtectedHeader(jwt);
    const { payload: bytes } = await compactVerify(jwt, opts.publicKey, { algorithms: ALGORITHMS });
    payload = JSON.parse(new TextDecoder().decode(bytes)) as typeof payload;
    const named = header.kid ?? payload.keyid;
    if (opts.keyId && named !== opts.keyId)
      throw new BundleSignatureError(`the bundle is signed with key '${String(named)}', not '${opts.keyId}'`);
  } catch (err) {
    if (err instanceof BundleSignatureError) throw err;
    throw new BundleSignatureError(`the signature does not verify with the configured public key: ${(err as Error).message}`);
  }
  if (payload.scope !== undefined && payload.scope !== '')
    throw new BundleSignatureError(`the signature has scope '${String(payload.scope)}'; none is accepted`);
  if (!Array.isArray(payload.files)) throw new BundleSignatureError('the signature lists no files');
  const listed = new Map<string, SignedFile>();
  for (const f of payload.files as SignedFile[]) listed.set(String(f?.name).replace(/^\/+/, ''), f);
  for (const [name, bytes] of files) {
    if (name === SIGNATURES_FILE) continue;
    const entry = listed.get(name);
    if (!entry) throw new BundleSignatureError(`${name} is not included in the bundle signature`);
    listed.delete(name);
    if (!DIGESTS[entry.algorithm])
      throw new BundleSignatureError(`${name} is signed with digest '${entry.algorithm}'; accepted: ${Object.keys(DIGESTS).join(', ')}`);
    let actual: string;
    try {
      actual = digest(name, bytes, entry.algorithm);
    } catch (err) {
      throw new BundleSignatureError(`${name}: ${(err as Error).message}`);
    }
    if (actual !== String(entry.hash).toLowerCase()) throw new BundleSignatureError(`${name} does not match its signed digest`);
  }
  if (listed.size > 0) throw new BundleSignatureError(`the signature lists ${[...listed.keys()].join(', ')}, missing from the bundle`);
}

/** A PEM public key (SPKI, PKCS#1 or a certificate). */
export const publicKeyFrom = (pem: string): KeyObject => createPublicKey(pem);

function defaultAlgorithm(key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'ES256';
    if (curve === 'secp384r1') return 'ES384';
  }
  throw new BundleSignatureError(
    `a ${key.asymmetricKeyType ?? 'unknown'} key cannot sign a bundle: use an RSA key (RS256) or an EC P-256 key (ES256)`,
  );
}

const STRUCTURED = new Set(['data.json', '.manifest']);

/** OPA's digest of one bundle file: a JSON document over its canonical form, anything else over its bytes. */
export function digest(name: string, bytes: Uint8Array, algorithm: string): string {
  const hash = createHash(DIGESTS[algorithm] ?? 'sha256');
  const base = name.slice(name.lastIndexOf('/') + 1);
  hash.update(STRUCTURED.has(base) ? canonicalJson(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) : bytes);
  return hash.digest('hex');
}

/**
 * OPA's canonical JSON (bundle/hash.go `walk`): keys sorted bytewise, no whitespace, strings as Go's encoder writes
 * them, numbers exactly as written in the file (OPA reads them as json.Number). A small parser keeps the numbers.
 */
export function canonicalJson(text: string): string {
  let at = 0;
  const ws = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const fail = (what: string): never => {
    throw new Error(`not valid JSON: ${what} at offset ${at}`);
  };
  const value = (): string => {
    ws();
    const c = text[at];
    if (c === '{') {
      at++;
      const members: [string, string][] = [];
      ws();
      if (text[at] === '}') at++;
      else
        for (;;) {
          ws();
          if (text[at] !== '"') fail('expected a key');
          const key = JSON.parse(stringToken()) as string;
          ws();
          if (text[at++] !== ':') fail("expected ':'");
          members.push([key, value()]);
          ws();
          const next = text[at++];
          if (next === '}') break;
          if (next !== ',') fail("expected ',' or '}'");
        }
      const sorted = members.sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      return `{${sorted.map(([k, v]) => `${goString(k)}:${v}`).join(',')}}`;
    }
    if (c === '[') {
      at++;
      const items: string[] = [];
      ws();
      if (text[at] === ']') at++;
      else
        for (;;) {
          items.push(value());
          ws();
          const next = text[at++];
          if (next === ']') break;
          if (next !== ',') fail("expected ',' or ']'");
        }
      return `[${items.join(',')}]`;
    }
    if (c === '"') return goString(JSON.parse(stringToken()) as string);
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(at, at + 400))?.[0];
    if (!literal) return fail('unexpected character');
    at += literal.length;
    return literal;
  };
  const stringToken = (): string => {
    const start = at++;
    while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    if (at >= text.length) fail('unterminated string');
    return text.slice(start, ++at);
  };
  const out = value();
  ws();
  if (at !== text.length) fail('trailing characters');
  return out;
}

/** A string as Go's encoding/json writes it with HTML escaping off: JSON.stringify, plus U+2028 and U+2029 escaped. */
const goString = (s: string): string =>
  JSON.stringify(s)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
