// One dashboard, served to one viewer. Started by the launcher under Node's permission model: it may read only
// this script and its own page file, write nothing and start no process. It checks the page's digest against the
// one the launcher verified, so a file swapped after verification is not served.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

// Fail closed where the permission model is not in force (a runtime without it, such as Bun, or missing flags).
const walls = process.permission;
if (!walls || walls.has('fs.write') || walls.has('child') || walls.has('worker')) {
  process.stderr.write("refusing to serve: Node's permission model is not restricting this sandbox\n");
  process.exit(4);
}

const [file, digest] = process.argv.slice(2);
const page = readFileSync(file, 'utf8');
const body = page.slice(page.indexOf('\n') + 1);
if (createHash('sha256').update(page).digest('hex') !== digest) {
  process.stderr.write('page changed after verification\n');
  process.exit(3);
}
const server = createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'X-Sandbox-Pid': String(process.pid), 'Cache-Control': 'no-store' });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
