import { Hono } from 'hono';
import type { AppEnv } from '../../platform/http.ts';
import type { TrackerDeps } from '../deps.ts';

export function metricRoutes(_deps: TrackerDeps): Hono<AppEnv> {
  return new Hono<AppEnv>();
}
