import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type FuzzRun = { exitCode: number; output: string; generated: number; failures: string[] };

/** The `st` command of the pinned Schemathesis, installed on first use (scripts/install-schemathesis.sh). */
export async function schemathesis(): Promise<string> {
  return (await run('bash', ['scripts/install-schemathesis.sh'], { maxBuffer: 1 << 20 })).stdout.trim();
}

/**
 * One `st run` against a service's /openapi.json: every documented operation and every check, a fixed seed so a
 * failure reproduces, `config` as its schemathesis.toml. Returns the report's headline numbers with the output.
 */
export async function fuzz(
  st: string,
  opts: {
    url: string;
    headers: Record<string, string>;
    config: string;
    workDir: string;
    name: string;
    examples: number;
    excludeChecks?: string[];
  },
): Promise<FuzzRun> {
  const configFile = join(opts.workDir, `${opts.name}.toml`);
  await writeFile(configFile, opts.config);
  const args = ['--config-file', configFile, 'run', `${opts.url}/openapi.json`, '--checks', 'all'];
  if (opts.excludeChecks?.length) args.push('--exclude-checks', opts.excludeChecks.join(','));
  for (const [name, value] of Object.entries(opts.headers)) args.push('-H', `${name}: ${value}`);
  args.push('-n', String(opts.examples), '--seed', '20261125', '-w', '1', '--no-color', '--generation-database', 'none');
  args.push('--report', 'junit', '--report-junit-path', join(opts.workDir, `${opts.name}.xml`));
  let exitCode = 0;
  let output: string;
  try {
    output = (await run(st, args, { maxBuffer: 64 << 20, timeout: 900_000 })).stdout;
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    exitCode = typeof failed.code === 'number' ? failed.code : 1;
    output = `${failed.stdout ?? ''}${failed.stderr ?? ''}`;
  }
  const generated = Number(/(\d+) generated/.exec(output)?.[1] ?? 0);
  const failures = [...output.matchAll(/^- (ST\d+ .+)$/gm)].map((m) => m[1]!);
  return { exitCode, output, generated, failures };
}
