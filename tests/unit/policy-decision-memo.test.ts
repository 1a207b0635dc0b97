import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Decided } from '../../src/platform/policy/decision-log.ts';
import { DEFAULT_BUILD_DIR, loadWasmPolicy, wasmEngine, type LoadedPolicy } from '../../src/platform/policy/wasm.ts';

// The wasm engine keeps a pure policy's decisions per loaded policy and exact input: a decision taken again is the
// same, a policy taken into force answers afresh, and every decision still reaches the decision log.
const viewer = { user: 'vic', roles: ['svc-viewer'], table: 'tpch.tiny.nation' };

async function loaded(grantViewer: boolean, revision: string): Promise<LoadedPolicy> {
  const [wasm, text] = await Promise.all([
    readFile(join(DEFAULT_BUILD_DIR, 'policy.wasm')),
    readFile(join(DEFAULT_BUILD_DIR, 'data.json'), 'utf8'),
  ]);
  const data = JSON.parse(text);
  data.svc.config.table_grants.roles['svc-viewer'] = grantViewer ? ['tpch.tiny.*'] : [];
  return loadWasmPolicy(wasm, new TextEncoder().encode(JSON.stringify(data)), revision);
}

describe('wasm policy decisions taken again', () => {
  it('answers a reloaded policy afresh, both ways, and logs every decision', async () => {
    const [closed, open] = await Promise.all([loaded(false, 'closed'), loaded(true, 'open')]);
    expect(closed.pure).toBe(true);
    let current = closed;
    const logged: [string | undefined, boolean][] = [];
    const engine = wasmEngine({
      current: () => current,
      unavailable: () => 'none',
      decisionLog: { record: (d: Decided) => logged.push([d.revision, d.result.allow]), close: async () => {} },
    });

    expect((await engine.decide('tables', viewer)).allow).toBe(false);
    expect((await engine.decide('tables', { ...viewer })).allow).toBe(false);
    current = open; // a deny never outlives the policy that gave it
    expect((await engine.decide('tables', viewer)).allow).toBe(true);
    current = closed; // nor an allow
    const again = await engine.decide('tables', viewer);
    expect(again).toEqual({ allow: false, reason: expect.stringMatching(/^denied: /) });
    // a caller changing its answer does not change the next one
    again.allow = true;
    expect((await engine.decide('tables', viewer)).allow).toBe(false);
    // another input is its own decision
    expect((await engine.decide('tables', { ...viewer, roles: ['svc-analyst'] })).allow).toBe(true);

    expect(logged).toEqual([
      ['closed', false],
      ['closed', false],
      ['open', true],
      ['closed', false],
      ['closed', false],
      ['closed', true],
    ]);
  });
});
