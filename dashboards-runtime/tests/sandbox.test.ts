import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signDashboard } from '@svc/platform/dashboard-signature';
import { describe, expect, it } from 'vitest';
import { sandboxArgs } from '../src/sandbox/launcher.ts';

// A local sandbox runs under Node's permission model: it reads its own page and nothing else, writes nothing and
// starts no process; and its script refuses to serve where the model is not in force.
async function pageFile(): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'svc-sandbox-test-')), 'page.html');
  await writeFile(file, signDashboard('<html><body>orders: 1500</body></html>', 'test-key', { id: 'd1', owner: 'olivia' }));
  return file;
}

describe('dashboards runtime: the process sandbox', () => {
  it('runs sandboxes that can neither write a file nor start a process', async () => {
    const file = await pageFile();
    const attempt = (code: string) => spawnSync(process.execPath, [...sandboxArgs(file), '-e', code], { encoding: 'utf8' });
    const write = attempt("require('fs').writeFileSync('/tmp/svc-sandbox-escape', 'x')");
    expect(write.status).not.toBe(0);
    expect(write.stderr).toContain('ERR_ACCESS_DENIED');
    const spawn = attempt("require('child_process').execSync('id')");
    expect(spawn.status).not.toBe(0);
    expect(spawn.stderr).toContain('ERR_ACCESS_DENIED');
    const readOther = attempt("require('fs').readFileSync('/etc/hostname')");
    expect(readOther.stderr).toContain('ERR_ACCESS_DENIED');
    const readOwn = attempt(`process.stdout.write(String(require('fs').readFileSync(${JSON.stringify(file)}).length))`);
    expect(readOwn.status).toBe(0);
  });

  it('refuses to serve from a sandbox the permission model does not restrict (no flags, or a runtime without it)', async () => {
    const file = await pageFile();
    const script = new URL('../src/sandbox/sandbox.mjs', import.meta.url).pathname;
    const open = spawnSync(process.execPath, [script, file, 'digest'], { encoding: 'utf8', timeout: 10_000 });
    expect(open.status).toBe(4);
    expect(open.stderr).toContain('permission model');
  });
});
