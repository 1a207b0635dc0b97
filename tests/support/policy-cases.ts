import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DECISION_NAMES, type PolicyDecisionName, type PolicyEngine } from '../../src/platform/policy/index.ts';

// The case tables in policies/<decision>/cases.json drive `opa test` and these suites alike, so OPA's own
// evaluator, the wasm build and the OPA sidecar are held to one table.
export type PolicyCase = { name: string; input: object; allow: boolean; reason_contains?: string };

export function loadCases(name: PolicyDecisionName): PolicyCase[] {
  const url = new URL(`../../policies/${name}/cases.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as PolicyCase[];
}

export function policyCaseSuite(label: string, engine: () => PolicyEngine) {
  describe.each([...DECISION_NAMES])(`%s decision (${label})`, (name) => {
    it.each(loadCases(name).map((c) => [c.name, c] as const))('%s', async (_, c) => {
      const decision = await engine().decide(name, c.input);
      expect(decision).toEqual({ allow: c.allow, reason: expect.stringMatching(c.allow ? /^allowed: / : /^denied: /) });
      expect(decision.reason).toContain(c.reason_contains ?? '');
    });
  });
}
