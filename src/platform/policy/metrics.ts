import { Counter, Registry } from 'prom-client';

// The policy port's own counters, in a registry of its own that every service holding the engine appends to its
// /metrics: bundles activated and refused (by stage), decision-log events sent, dropped and failed uploads.
export type PolicyMetrics = {
  registry: Registry;
  bundleLoads: Counter;
  bundleRefusals: Counter<'stage'>;
  decisionLogsSent: Counter;
  decisionLogsDropped: Counter;
  decisionLogUploadFailures: Counter;
};

export function createPolicyMetrics(): PolicyMetrics {
  const registry = new Registry();
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  return {
    registry,
    bundleLoads: counter('svc_policy_bundle_loads_total', 'Policy bundles activated'),
    bundleRefusals: counter('svc_policy_bundle_refusals_total', 'Policy bundles refused, by the stage that refused them', [
      'stage',
    ] as const),
    decisionLogsSent: counter('svc_policy_decision_logs_sent_total', 'Decision-log events accepted by the collector'),
    decisionLogsDropped: counter('svc_policy_decision_logs_dropped_total', 'Decision-log events dropped because the buffer was full'),
    decisionLogUploadFailures: counter(
      'svc_policy_decision_log_upload_failures_total',
      'Decision-log batches the collector did not accept',
    ),
  };
}
