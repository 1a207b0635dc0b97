import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { PolicyEngine } from '../../src/platform/policy/index.ts';

// The case tables in policies/svc/<decision>/cases.json drive `opa test` and these suites alike, so OPA's own
// evaluator, the wasm build and the OPA sidecar are held to one table.
export type PolicyCase = { name: string; input: object; allow: boolean; reason_contains?: string; limits?: unknown };

const decisionsDir = new URL('../../policies/svc/', import.meta.url);

/** The decisions that have a case table: the folders of policies/svc/ holding a cases.json. */
export const decisionsWithCases = (): string[] =>
  readdirSync(decisionsDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(new URL(`${e.name}/cases.json`, decisionsDir)))
    .map((e) => e.name)
    .sort();

export function loadCases(name: string): PolicyCase[] {
  return (JSON.parse(readFileSync(new URL(`${name}/cases.json`, decisionsDir), 'utf8')) as { cases: PolicyCase[] }).cases;
}

export function policyCaseSuite(label: string, engine: () => PolicyEngine) {
  it(`serves exactly the decisions that have a case table (${label})`, async () => {
    expect(await engine().decisions()).toEqual(decisionsWithCases());
  });

  describe.each(decisionsWithCases())(`%s decision (${label})`, (name) => {
    it.each(loadCases(name).map((c) => [c.name, c] as const))('%s', async (_, c) => {
      const decision = await engine().decide(name, c.input);
      // A decision may say more than allow and reason (limits names role limits); a case that names it checks it.
      const { allow, reason, ...more } = decision;
      expect({ allow, reason }).toEqual({ allow: c.allow, reason: expect.stringMatching(c.allow ? /^allowed: / : /^denied: /) });
      if (c.limits !== undefined) expect(more.limits).toEqual(c.limits);
      expect(decision.reason).toContain(c.reason_contains ?? '');
    });
  });
}
