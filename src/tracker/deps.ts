import type { CallerResolver } from '../platform/auth/index.ts';
import type { Database } from '../platform/db/index.ts';
import type { Logger } from '../platform/log.ts';
import type { ServiceMetrics } from '../platform/metrics.ts';
import type { ObjectStore } from '../platform/objects/index.ts';
import type { PolicyEngine } from '../platform/policy/index.ts';
import type { TrackerConfig } from './config.ts';
import type { SchemaGate } from './schema-gate.ts';

/** Everything the tracker's routes need, built once by the app factory (or by a test). */
export type TrackerDeps = {
  config: TrackerConfig;
  db: Database;
  /** The store under the artifact root; keys are relative to the root. */
  artifacts: ObjectStore;
  /** The root URI as configured (s3://bucket/prefix, or an absolute folder path), without a trailing '/'. */
  artifactRoot: string;
  /** Epoch milliseconds; a test may pin it. */
  now(): number;
  logger: Logger;
  metrics: ServiceMetrics;
  /** Whether the database schema is current; when it is not, writes are refused (see schema-gate.ts). */
  schema: SchemaGate;
  /** Who calls (SVC_AUTH_MODE); the ingress's headers when absent. */
  callers?: CallerResolver;
  /** Decides who reads the platform's own traces (svc.tracker); without one, those traces are refused. */
  policy?: PolicyEngine;
  /** The experiment the platform's own traces go to (SVC_TRACE_EXPERIMENT), read under the policy (traces/access.ts). */
  platformTraces?: number;
};
