import { createSidecarPolicyEngine } from './sidecar.ts';
import type { PolicyEngine } from './types.ts';
import { createWasmPolicyEngine } from './wasm.ts';

export { decideConsole, type ConsoleName } from './console.ts';
export { createSidecarPolicyEngine } from './sidecar.ts';
export { createWasmPolicyEngine, DEFAULT_BUILD_DIR } from './wasm.ts';
export { entrypointOf } from './types.ts';
export type { PolicyDecision, PolicyEngine } from './types.ts';

/** The OPA sidecar when SVC_OPA_URL is set, else the committed wasm build (or SVC_POLICY_BUNDLE's folder) in-process. */
export async function createPolicyEngine(cfg: { OPA_URL?: string | undefined; POLICY_BUNDLE?: string | undefined }): Promise<PolicyEngine> {
  if (cfg.OPA_URL) return createSidecarPolicyEngine({ url: cfg.OPA_URL });
  return createWasmPolicyEngine(cfg.POLICY_BUNDLE ? { buildDir: cfg.POLICY_BUNDLE } : {});
}
