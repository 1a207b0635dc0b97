import { int, loadConfig, optionalStr, str, type Env } from '../platform/config.ts';

export const runtimeShape = {
  EXPLORE_URL: str('http://localhost:8081'),
  DASHBOARD_HMAC_KEY: optionalStr(),
  DASHBOARD_HMAC_KEY_OLD: optionalStr(),
  DISCOVERY_INTERVAL_SECONDS: int(30, 1),
  SANDBOX_IDLE_SECONDS: int(300, 1),
};
export type RuntimeConfig = ReturnType<typeof loadRuntimeConfig>;
export const loadRuntimeConfig = (env: Env) => loadConfig(runtimeShape, env);
