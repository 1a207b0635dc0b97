import { Hono } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';
import { modelVersionRoutes } from './model-version-routes.ts';
import { registeredModelRoutes } from './registered-model-routes.ts';

/** The model registry's endpoints, paths relative to the API prefix (/registered-models/..., /model-versions/...). */
export function registryRoutes(deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>().route('/', registeredModelRoutes(deps)).route('/', modelVersionRoutes(deps));
}
