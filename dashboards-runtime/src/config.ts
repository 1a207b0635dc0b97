import { int, loadConfig, optionalStr, str, type Env } from '@svc/platform/config';

export const runtimeShape = {
  EXPLORE_URL: str('http://localhost:8081'),
  DASHBOARD_HMAC_KEY: optionalStr(),
  DASHBOARD_HMAC_KEY_OLD: optionalStr(),
  DASHBOARDS_STORE: optionalStr(),
  DASHBOARDS_DIR: optionalStr(),
  SANDBOX_IDLE_SECONDS: int(300, 1),
  SANDBOX_MAX: int(20, 1),
  SANDBOX_MAX_PER_USER: int(3, 1),
};
export type RuntimeConfig = ReturnType<typeof loadRuntimeConfig>;
export const loadRuntimeConfig = (env: Env) => loadConfig(runtimeShape, env);
