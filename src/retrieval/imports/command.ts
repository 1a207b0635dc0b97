import { Registry } from 'prom-client';
import type { Caller } from '../../platform/identity.ts';
import { createLimiter, loadLimitSettings } from '../../platform/limits/index.ts';
import type { Logger } from '../../platform/log.ts';
import type { SharedParts } from '../../platform/service.ts';
import type { Lake } from '../backends/lake.ts';
import { loadRetrievalConfig } from '../config.ts';
import { createEmbedder, openLake } from '../service.ts';
import type { ImportDeps } from './index.ts';

// What `svc embed` opens to run an import's workers in its own process: the service's settings, database, policy,
// gateway and lake, without the rest of the service (no HTTP, no OCR, no indexes).

export async function openImportDeps(env: NodeJS.ProcessEnv, shared: SharedParts, logger: Logger): Promise<ImportDeps & { lake: Lake }> {
  const config = loadRetrievalConfig(env);
  const lake = await openLake(config, { embedded: false, logger });
  if (!lake)
    throw new Error('svc embed writes to a lake collection: set SVC_TRINO_URL (and SVC_TRINO_SERVICE_TOKEN) as for the retrieval service');
  return {
    config,
    db: shared.db,
    policy: shared.policy,
    lake,
    embedder: createEmbedder(config, logger),
    limiter: createLimiter({ db: shared.db, policy: shared.policy, limits: loadLimitSettings(env), registry: new Registry() }),
    logger,
  };
}

/**
 * Who runs the command, resolved as the service resolves a request's caller (SVC_AUTH_MODE): under `jwt` the token
 * alone says who; under `headers` the user and roles are as an ingress would pass them. The token is also what the
 * source is read with on Trino.
 */
export function commandCaller(
  shared: SharedParts,
  who: { user?: string | undefined; roles?: string | undefined; token?: string | undefined },
): Promise<Caller> {
  const headers = new Headers();
  if (who.token) {
    headers.set('authorization', `Bearer ${who.token}`);
    headers.set('x-user-token', who.token);
  }
  if (who.user) headers.set('x-user-id', who.user);
  if (who.roles) headers.set('x-user-role', who.roles);
  return shared.callers.callerFrom(headers);
}
