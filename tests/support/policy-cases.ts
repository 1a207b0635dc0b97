import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { PolicyDecisionName, PolicyEngine } from '../../src/platform/policy/index.ts';

// The case tables in policies/<decision>/cases.json drive `opa test` and these tests alike, so the wasm, the OPA
// sidecar and OPA's own evaluator are held to one table.
export type PolicyCase = { name: string; input: object; allow: boolean; reason?: string };

export const DECISIONS: PolicyDecisionName[] = ['tables', 'dashboards', 'collections'];

export function loadCases(name: PolicyDecisionName): PolicyCase[] {
  const url = new URL(`../../policies/${name}/cases.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { cases: PolicyCase[] }).cases;
}

export function policyCaseSuite(label: string, engine: () => PolicyEngine) {
  describe.each(DECISIONS)(`%s decision (${label})`, (name) => {
    it.each(loadCases(name).map((c) => [c.name, c] as const))('%s', async (_, c) => {
      const decision = await engine().decide(name, c.input);
      expect(decision.allow).toBe(c.allow);
      expect(decision.reason).toContain(c.reason ?? '');
      expect(decision.reason).toMatch(c.allow ? /^allowed: / : /^denied: /);
    });
  });
}
