import { z } from 'zod';

// One loader for every service. A setting named NAME resolves from SVC_NAME, else the bare NAME;
// an empty string counts as unset. A bad value stops start-up with a message naming the variable.

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig<S extends z.ZodRawShape>(shape: S, env: Env = process.env): z.infer<z.ZodObject<S>> {
  const raw: Record<string, string | undefined> = {};
  const source: Record<string, string> = {};
  for (const name of Object.keys(shape)) {
    const found = settingWithSource(env, name);
    raw[name] = found?.value;
    source[name] = found?.key ?? `SVC_${name}`;
  }
  const parsed = z.object(shape).safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '');
    return `${source[name]}=${JSON.stringify(raw[name] ?? '')}: ${issue.message}`;
  });
  throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
}

export const setting = (env: Env, name: string): string | undefined => settingWithSource(env, name)?.value;

function settingWithSource(env: Env, name: string): { key: string; value: string } | undefined {
  for (const key of [`SVC_${name}`, name]) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') return { key, value: value.trim() };
  }
  return undefined;
}

// Field builders. Each takes the default from the specification.
export const str = (fallback: string) => z.string().default(fallback);
export const optionalStr = () => z.string().optional();
export const int = (fallback: number, min = 0) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) {
        ctx.addIssue({ code: 'custom', message: `expected an integer >= ${min}` });
        return z.NEVER;
      }
      return n;
    });
/**
 * A TCP port: an integer from 1 to 65535. `listening` ports (what a service binds) also take 0, the operating system's
 * "any free port", which tests and one-off runs use; a port to connect to (Postgres, a sandbox) never does.
 */
export const port = (fallback: number, opts: { listening?: boolean } = {}) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return fallback;
      const n = Number(v);
      if (!isPort(n, opts)) {
        ctx.addIssue({ code: 'custom', message: portProblem(opts) });
        return z.NEVER;
      }
      return n;
    });
export const isPort = (n: number, opts: { listening?: boolean } = {}) =>
  Number.isInteger(n) && n <= 65535 && (n >= 1 || (opts.listening === true && n === 0));
export const portProblem = (opts: { listening?: boolean } = {}) =>
  `expected a port from 1 to 65535${opts.listening ? ' (or 0 for any free port)' : ''}`;
export const num = (fallback: number, min = -Infinity, max = Infinity) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return fallback;
      const n = Number(v);
      if (!Number.isFinite(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected a number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });
export const flag = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return fallback;
      const s = v.toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return true;
      if (['false', '0', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: 'expected true or false' });
      return z.NEVER;
    });
export const list = (fallback: string[]) =>
  z
    .string()
    .optional()
    .transform((v) =>
      v === undefined
        ? fallback
        : v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
    );
export const url = () => z.url({ protocol: /^https?$/, message: 'expected an absolute http(s) URL' }).optional();

// Settings every service shares: database, policy engine, logging, tracing.
export const platformShape = {
  PG_HOST: optionalStr(),
  PG_PORT: port(5432),
  PG_DATABASE: str('svc'),
  PG_USER: str('svc'),
  PG_PASSWORD: optionalStr(),
  DATA_DIR: str('./data'),
  /**
   * The time limit of every database statement, in ms. On Postgres its statement_timeout; on embedded PGlite, which
   * cannot interrupt a statement, the caller is answered at once and new statements are refused until it ends.
   */
  DB_STATEMENT_TIMEOUT_MS: int(120_000, 1),
  /** The address services listen on: `svc dev` loopback unless told otherwise (it trusts identity headers), `svc serve` every address. */
  HOST: optionalStr(),
  OPA_URL: url(),
  POLICY_BUNDLE: optionalStr(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRACING_ENABLED: flag(false),
  OTEL_EXPORTER_OTLP_ENDPOINT: url(),
  /**
   * The tracker experiment (its id) the platform's own spans belong to, sent as MLflow's `x-mlflow-experiment-id`
   * header: with SVC_OTEL_EXPORTER_OTLP_ENDPOINT at a tracker, every question and answer becomes a trace there.
   */
  TRACE_EXPERIMENT: z.string().regex(/^\d+$/, 'expected a tracker experiment id (digits)').optional(),
  /**
   * The tracker's address as a person's browser reaches it (behind the ingress): with tracing on, the consoles link
   * an answer to its trace in the tracker's UI there. Unset: no such link.
   */
  TRACKER_URL: url(),
};
export type PlatformConfig = z.infer<z.ZodObject<typeof platformShape>>;
export const loadPlatformConfig = (env: Env = process.env) => loadConfig(platformShape, env);
