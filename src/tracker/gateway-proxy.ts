import { Hono } from 'hono';
import type { AppEnv } from '../platform/http.ts';
import { TrackerError, trackerErrorResponse } from './errors.ts';

/** Where MLflow's UI asks its AI gateway for endpoints (the prompt lab); only under the UI's prefix, as in MLflow. */
export const GATEWAY_PROXY_PATH = '/ajax-api/2.0/mlflow/gateway-proxy';

// svc's tracker has no deployments gateway behind it. MLflow's server without a deployments target answers every
// GET and POST here with an empty endpoint list, whatever the body, so its UI shows no endpoints rather than an
// error; other methods are 405. svc answers the same, and never forwards a request anywhere.
export function gatewayProxyRoutes(): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .on(['GET', 'POST'], GATEWAY_PROXY_PATH, (c) => c.json({ endpoints: [] }))
    .all(GATEWAY_PROXY_PATH, (c) => {
      const refused = new TrackerError('BAD_REQUEST', `The method ${c.req.method} is not allowed for ${GATEWAY_PROXY_PATH}.`, 405);
      const res = trackerErrorResponse(refused, c);
      res.headers.set('Allow', 'GET, POST');
      return res;
    });
}
