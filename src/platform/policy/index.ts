import type { Env } from '../config.ts';
import { createLogger, type Logger } from '../log.ts';
import { createBundlePolicyEngine, type BundleActivation } from './bundle-engine.ts';
import { openBundleSource } from './bundle-source.ts';
import { createDecisionLog } from './decision-log.ts';
import { createPolicyMetrics } from './metrics.ts';
import { loadPolicySettings } from './settings.ts';
import { createSidecarPolicyEngine } from './sidecar.ts';
import type { PolicyEngine } from './types.ts';
import { createWasmPolicyEngine } from './wasm.ts';

export { decideConsole, type ConsoleName } from './console.ts';
export { createSidecarPolicyEngine } from './sidecar.ts';
export { createWasmPolicyEngine, DEFAULT_BUILD_DIR, knownRolesOf } from './wasm.ts';
export { createBundlePolicyEngine, type BundleActivation, type BundleEngine, type PollOutcome } from './bundle-engine.ts';
export { openBundleSource } from './bundle-source.ts';
export { createDecisionLog, type DecisionEvent } from './decision-log.ts';
export { createPolicyMetrics } from './metrics.ts';
export { inRequest } from '../request-scope.ts';
export { policyShape, loadPolicySettings } from './settings.ts';
export { entrypointOf } from './types.ts';
export type { PolicyDecision, PolicyEngine } from './types.ts';

/**
 * The engine the configuration selects: the OPA sidecar when SVC_OPA_URL is set; else a signed bundle polled from
 * SVC_POLICY_BUNDLE_URL; else the committed wasm build (or SVC_POLICY_BUNDLE's folder) in-process. Each logs its
 * decisions in OPA's format (policy/decision-log.ts). `env` holds the policy settings (policy/settings.ts);
 * `embedded` (`svc dev`) ignores a bundle URL as it ignores SVC_OPA_URL.
 */
export async function createPolicyEngine(
  cfg: { OPA_URL?: string | undefined; POLICY_BUNDLE?: string | undefined; LOG_LEVEL?: string },
  env: Env = {},
  opts: { embedded?: boolean; logger?: Logger; onBundleActivated?: (activation: BundleActivation) => Promise<unknown> } = {},
): Promise<PolicyEngine> {
  const settings = loadPolicySettings(env);
  const logger = opts.logger ?? createLogger('policy', cfg.LOG_LEVEL ?? 'info');
  const metrics = createPolicyMetrics();
  const decisionLog = createDecisionLog({
    logger: settings.decisionLog.console ? logger : undefined,
    url: settings.decisionLog.url,
    metrics,
    bufferSize: settings.decisionLog.bufferSize,
    flushMs: settings.decisionLog.flushMs,
  });
  const withMetrics = (engine: PolicyEngine): PolicyEngine => Object.assign(engine, { metrics: () => metrics.registry.metrics() });
  if (cfg.OPA_URL) return withMetrics(createSidecarPolicyEngine({ url: cfg.OPA_URL, decisionLog }));
  if (settings.bundle && !opts.embedded) {
    const { url, s3, ...rest } = settings.bundle;
    return createBundlePolicyEngine({
      source: openBundleSource(url, s3),
      ...rest,
      logger,
      metrics,
      decisionLog,
      onActivated: opts.onBundleActivated,
    });
  }
  return withMetrics(await createWasmPolicyEngine({ ...(cfg.POLICY_BUNDLE ? { buildDir: cfg.POLICY_BUNDLE } : {}), decisionLog }));
}
