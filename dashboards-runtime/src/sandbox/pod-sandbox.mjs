// One dashboard, served to one viewer, in a pod of its own (the Kubernetes back end, ./kubernetes.ts). The pod has
// no token, a read-only root file system and a NetworkPolicy that lets it reach only Trino and DNS, so the runtime
// hands the page over instead of the pod fetching it: one PUT /page carrying the upload token from the pod's
// environment and a body whose sha256 is the digest the runtime verified. Then every GET serves the page. Node's
// permission model is on too (it may read this script only) and the script refuses to run without it.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const walls = process.permission;
if (!walls || walls.has('fs.write') || walls.has('child') || walls.has('worker')) {
  process.stderr.write("refusing to serve: Node's permission model is not restricting this sandbox\n");
  process.exit(4);
}

const digest = process.env.SVC_SANDBOX_DIGEST ?? '';
const token = Buffer.from(process.env.SVC_SANDBOX_UPLOAD_TOKEN ?? '');
const port = Number(process.env.SVC_SANDBOX_PORT ?? 8080);
// The runtime deletes an idle sandbox itself; this is the backstop if it cannot (its pod is gone, for example).
const idleMs = Number(process.env.SVC_SANDBOX_EXIT_AFTER_IDLE_SECONDS ?? 3600) * 1000;
if (!/^[0-9a-f]{64}$/.test(digest) || token.length < 32) {
  process.stderr.write('SVC_SANDBOX_DIGEST and SVC_SANDBOX_UPLOAD_TOKEN must be set\n');
  process.exit(2);
}

let body; // the page without its signature line, once handed over
let lastUsed = Date.now();
const MAX_PAGE_BYTES = 64 * 1024 * 1024;

const answer = (res, status, text, type = 'text/plain; charset=utf-8') => {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
  res.end(text);
};
const tokenOk = (header) => {
  const given = Buffer.from(String(header ?? '').replace(/^Bearer /, ''));
  return given.length === token.length && timingSafeEqual(given, token);
};

const server = createServer((req, res) => {
  lastUsed = Date.now();
  if (req.url === '/healthz') return answer(res, 200, 'ok');
  if (req.method === 'PUT' && req.url === '/page') {
    if (!tokenOk(req.headers.authorization)) return answer(res, 401, 'wrong upload token');
    if (body !== undefined) return answer(res, 409, 'the page was already handed over');
    const parts = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_PAGE_BYTES) req.destroy();
      else parts.push(chunk);
    });
    req.on('end', () => {
      const page = Buffer.concat(parts);
      if (createHash('sha256').update(page).digest('hex') !== digest) return answer(res, 422, 'page does not match the verified digest');
      const text = page.toString('utf8');
      body = text.slice(text.indexOf('\n') + 1);
      answer(res, 204, '');
    });
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, 405, 'method not allowed');
  if (body === undefined) return answer(res, 503, 'no page yet');
  answer(res, 200, body, 'text/html; charset=utf-8');
});
server.listen(port); // every address, IPv4 and IPv6: the pod's own network namespace
setInterval(() => Date.now() - lastUsed > idleMs && process.exit(0), Math.min(idleMs, 60_000)).unref();
