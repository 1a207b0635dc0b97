import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { withTempDir } from './build.ts';
import { asDecision, entrypointOf, type PolicyDecision } from './types.ts';

// `svc policies explain`: one decision taken by OPA's own evaluator over the working tree's policies, with its trace
// (`opa eval --explain full`), reduced to the rules that fired: every rule whose evaluation exited with a value,
// in the order they did, with its source line. The decision rule itself comes last, at the branch that answered.

export type FiredRule = { file: string; row: number; rule: string; source: string };
export type Explanation = { decision: string; input: object; result: PolicyDecision; rules: FiredRule[] };

type TraceEvent = { Op?: string; Node?: { head?: { name?: string } }; Location?: { file?: string; row?: number } };

export async function explainDecision(opts: { policiesDir: string; decision: string; input: object }): Promise<Explanation> {
  const entrypoint = entrypointOf(opts.decision);
  const root = dirname(opts.policiesDir);
  const stdout = await withTempDir(async (dir) => {
    const inputFile = join(dir, 'input.json');
    await writeFile(inputFile, JSON.stringify(opts.input));
    const args = [
      'eval',
      '--format',
      'json',
      '--explain',
      'full',
      '-i',
      inputFile,
      '-d',
      opts.policiesDir,
      '--ignore',
      'build',
      '--ignore',
      'cases.json',
      '--ignore',
      '*_test.rego',
    ];
    const run = promisify(execFile)(opaBinary(), [...args, `data.${entrypoint.replace(/\//g, '.')}`], {
      cwd: root,
      maxBuffer: 256 * 1024 * 1024,
    });
    return (
      await run.catch((err: NodeJS.ErrnoException & { stderr?: string }) => {
        if (err.code === 'ENOENT') throw new Error('opa is not installed: run scripts/install-opa.sh');
        throw new Error(`opa eval failed: ${err.stderr?.trim() || err.message}`);
      })
    ).stdout;
  });
  return explained(opts, stdout, root);
}

/** The opa scripts/install-opa.sh installs (in $SVC_CACHE/bin, as scripts/env.sh says), else the one on PATH. */
function opaBinary(): string {
  const cached = join(process.env.SVC_CACHE ?? join(homedir(), '.cache/svc'), 'bin/opa');
  return existsSync(cached) ? cached : 'opa';
}

async function explained(opts: { decision: string; input: object }, stdout: string, root: string): Promise<Explanation> {
  const out = JSON.parse(stdout) as { result?: { expressions?: { value?: unknown }[] }[]; explanation?: TraceEvent[] };
  const result = asDecision(out.result?.[0]?.expressions?.[0]?.value, entrypointOf(opts.decision));
  const seen = new Set<string>();
  const rules: FiredRule[] = [];
  const sources = new Map<string, string[]>();
  for (const e of out.explanation ?? []) {
    const name = e.Node?.head?.name;
    const { file, row } = e.Location ?? {};
    if (e.Op !== 'Exit' || !name || !file || !row) continue;
    const key = `${file}:${row}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const path = isAbsolute(file) ? file : join(root, file);
    if (!sources.has(path)) sources.set(path, (await readFile(path, 'utf8').catch(() => '')).split('\n'));
    rules.push({ file: relative(root, path), row, rule: name, source: (sources.get(path)![row - 1] ?? '').trim() });
  }
  return { decision: opts.decision, input: opts.input, result, rules };
}

export function formatExplanation(e: Explanation): string {
  const lines = [
    `decision: ${e.decision} -> ${e.result.allow ? 'allow' : 'deny'}`,
    `reason:   ${e.result.reason}`,
    `input:    ${JSON.stringify(e.input)}`,
    'rules that fired:',
    ...e.rules.map((r) => `  ${r.file}:${r.row}  ${r.rule}  ${r.source}`),
  ];
  return `${lines.join('\n')}\n`;
}
