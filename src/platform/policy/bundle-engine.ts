import type { KeyObject } from 'node:crypto';
import type { Logger } from '../log.ts';
import { bundleCases, unpackBundle, type Bundle } from './bundle.ts';
import type { BundleSource } from './bundle-source.ts';
import type { DecisionLog } from './decision-log.ts';
import type { PolicyMetrics } from './metrics.ts';
import { verifyFiles } from './signing.ts';
import { describeError, type PolicyEngine } from './types.ts';
import { evaluateWasm, loadWasmPolicy, wasmEngine, type LoadedPolicy } from './wasm.ts';

// A wasm engine fed by a published, signed bundle: fetched at start, then polled. A new bundle decides only after
// it downloaded, verified against the configured public key, loaded, and passed its own case tables; the swap is
// one assignment, so a decision runs wholly on the old policy or wholly on the new. A bundle refused at any stage
// leaves the previous one deciding; the refusal is logged (with its stage and reason) and counted. Until a first
// bundle is accepted the engine denies everything and is not ready: a configured URL never falls back to the
// committed build, which may grant what the publisher has since withdrawn.

export type BundleStage = 'download' | 'verify' | 'load' | 'smoke';
export type PollOutcome =
  | { outcome: 'activated' | 'unchanged'; revision: string | undefined }
  | { outcome: 'refused'; stage: BundleStage; reason: string };

export class BundleRefused extends Error {
  override name = 'BundleRefused';
  constructor(
    readonly stage: BundleStage,
    message: string,
  ) {
    super(message);
  }
}

export type BundleActivation = { url: string; revision: string; previous: string | null; decisions: string[] };

export type BundleEngine = PolicyEngine & {
  /** One poll now (the timer keeps its own pace): for the CLI and tests. */
  poll(): Promise<PollOutcome>;
};

export async function createBundlePolicyEngine(opts: {
  source: BundleSource;
  publicKey: KeyObject;
  keyId?: string | undefined;
  pollSeconds: number;
  logger: Logger;
  metrics: PolicyMetrics;
  decisionLog?: DecisionLog | undefined;
  /** Told of every bundle taken into force (the launcher records it in the audit chain); its failure is logged. */
  onActivated?: ((activation: BundleActivation) => Promise<unknown>) | undefined;
}): Promise<BundleEngine> {
  const { source, logger, metrics } = opts;
  let current: LoadedPolicy | undefined;
  let etag: string | undefined;
  let failure = `no policy bundle has been accepted yet from ${source.url}`;
  let polling: Promise<PollOutcome> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  async function pollOnce(): Promise<PollOutcome> {
    let fetched;
    try {
      fetched = await source.fetch(etag);
    } catch (err) {
      return refuse(new BundleRefused('download', describeError(err)));
    }
    if (fetched === 'unchanged') return { outcome: 'unchanged', revision: current?.revision };
    try {
      const next = await accept(fetched.bytes, opts.publicKey, opts.keyId);
      const previous = current?.revision;
      current = next;
      etag = fetched.etag;
      metrics.bundleLoads.inc();
      logger.info(
        { event: 'policy_bundle_activated', url: source.url, revision: next.revision, previous, decisions: next.decisions },
        'policy bundle activated',
      );
      await opts
        .onActivated?.({ url: source.url, revision: next.revision, previous: previous ?? null, decisions: next.decisions })
        .catch((err: unknown) =>
          logger.error(
            { event: 'policy_bundle_not_recorded', revision: next.revision, err: describeError(err) },
            'the policy bundle activation could not be recorded in the audit chain',
          ),
        );
      return { outcome: 'activated', revision: next.revision };
    } catch (err) {
      return refuse(err instanceof BundleRefused ? err : new BundleRefused('load', describeError(err)));
    }
  }

  function refuse(err: BundleRefused): PollOutcome {
    metrics.bundleRefusals.inc({ stage: err.stage });
    if (!current) failure = `no policy bundle accepted from ${source.url}: ${err.message}`;
    logger.warn(
      {
        event: 'policy_bundle_refused',
        url: source.url,
        stage: err.stage,
        reason: err.message,
        revision_in_force: current?.revision ?? null,
      },
      'policy bundle refused; the previous one keeps deciding',
    );
    return { outcome: 'refused', stage: err.stage, reason: err.message };
  }

  const poll = () => (polling ??= pollOnce().finally(() => (polling = undefined)));
  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => void poll().finally(schedule), opts.pollSeconds * 1000);
    timer.unref();
  };

  await poll();
  schedule();
  const engine = wasmEngine({
    current: () => current,
    unavailable: () => failure,
    decisionLog: opts.decisionLog,
    close: async () => {
      closed = true;
      if (timer) clearTimeout(timer);
      await polling;
    },
  });
  return Object.assign(engine, { poll, metrics: () => metrics.registry.metrics() });
}

/** Verify, load, then smoke-test a downloaded bundle; the first stage that fails says why. */
async function accept(bytes: Uint8Array, publicKey: KeyObject, keyId: string | undefined): Promise<LoadedPolicy> {
  let bundle: Bundle;
  try {
    bundle = unpackBundle(bytes);
    await verifyFiles(bundle.files, { publicKey, keyId });
  } catch (err) {
    throw new BundleRefused('verify', describeError(err));
  }
  const wasm = bundle.files.get('policy.wasm');
  const data = bundle.files.get('data.json');
  if (!wasm || !data)
    throw new BundleRefused('load', 'the bundle has no policy.wasm or no data.json: build it with `svc policies build --sign`');
  let loaded: LoadedPolicy;
  try {
    loaded = await loadWasmPolicy(wasm, data, bundle.manifest.revision);
  } catch (err) {
    throw new BundleRefused('load', `revision ${bundle.manifest.revision}: ${describeError(err)}`);
  }
  const failed = smokeFailure(loaded, bundleCases(bundle.files));
  if (failed) throw new BundleRefused('smoke', `revision ${bundle.manifest.revision}: ${failed}`);
  return loaded;
}

/** Every decision the bundle serves has a case table in it, and every case holds; else what failed first. */
export function smokeFailure(loaded: LoadedPolicy, tables: Map<string, unknown>): string | undefined {
  for (const name of loaded.decisions) {
    const cases = tables.get(name);
    if (!Array.isArray(cases) || cases.length === 0) return `decision ${name} has no case table (svc/${name}/cases.json)`;
    for (const c of cases as { name?: unknown; input?: unknown; allow?: unknown; reason_contains?: unknown }[]) {
      const got = evaluateWasm(loaded, name, (c?.input ?? {}) as object);
      const prefix = c?.allow ? 'allowed: ' : 'denied: ';
      const wanted = typeof c?.reason_contains === 'string' ? c.reason_contains : '';
      if (got.allow !== c?.allow || !got.reason.startsWith(prefix) || !got.reason.includes(wanted)) {
        return `case '${String(c?.name)}' of ${name} fails: wanted allow=${String(c?.allow)}, got ${JSON.stringify(got)}`;
      }
    }
  }
  return undefined;
}
