import { flag, int, loadConfig, optionalStr, type Env } from '../platform/config.ts';

// Tracker settings. Each NAME resolves from SVC_NAME, else NAME, so MLflow's and AWS's own names work as they are.
const trackerShape = {
  // MLflow's largest legal requests (a batch of 1000 values, dataset schemas of up to 1 MiB) fit well inside this
  MAX_JSON_BYTES: int(8 * 1_048_576, 1024),
  /** Root of every artifact: s3://bucket/prefix, file:///path or a folder path. Default: <DATA_DIR>/tracker-artifacts. */
  TRACKER_ARTIFACT_ROOT: optionalStr(),
  TRACKER_S3_ENDPOINT_URL: optionalStr(),
  MLFLOW_S3_ENDPOINT_URL: optionalStr(),
  OBJSTORE_ACCESS_KEY_ID: optionalStr(),
  OBJSTORE_SECRET_ACCESS_KEY: optionalStr(),
  AWS_ACCESS_KEY_ID: optionalStr(),
  AWS_SECRET_ACCESS_KEY: optionalStr(),
  AWS_DEFAULT_REGION: optionalStr(),
  TRACKER_MIGRATE_AT_START: optionalStr(),
};

export type TrackerConfig = {
  /** Undefined: the data folder's tracker-artifacts (the service resolves it). */
  artifactRoot: string | undefined;
  s3: { endpoint?: string; region?: string; accessKeyId?: string; secretAccessKey?: string };
  /**
   * Apply pending tracker migrations at start. Undefined: on for the embedded database, off on Postgres, where an
   * older schema leaves the server read-only until `svc tracker db upgrade` runs. A database without any tracker
   * schema is always initialised (an install, not an upgrade).
   */
  migrateAtStart: boolean | undefined;
  /** The largest JSON body read whole (SVC_MAX_JSON_BYTES). */
  maxJsonBytes: number;
};

export function loadTrackerConfig(env: Env): TrackerConfig {
  const raw = loadConfig(trackerShape, env);
  const migrateAtStart =
    raw.TRACKER_MIGRATE_AT_START === undefined
      ? undefined
      : loadConfig({ TRACKER_MIGRATE_AT_START: flag(true) }, env).TRACKER_MIGRATE_AT_START;
  // The two credential pairs are taken whole, never one name from each.
  const [accessKeyId, secretAccessKey] = raw.OBJSTORE_ACCESS_KEY_ID
    ? [raw.OBJSTORE_ACCESS_KEY_ID, raw.OBJSTORE_SECRET_ACCESS_KEY]
    : [raw.AWS_ACCESS_KEY_ID, raw.AWS_SECRET_ACCESS_KEY];
  const endpoint = raw.TRACKER_S3_ENDPOINT_URL ?? raw.MLFLOW_S3_ENDPOINT_URL;
  return {
    artifactRoot: raw.TRACKER_ARTIFACT_ROOT,
    s3: {
      ...(endpoint ? { endpoint } : {}),
      ...(raw.AWS_DEFAULT_REGION ? { region: raw.AWS_DEFAULT_REGION } : {}),
      ...(accessKeyId ? { accessKeyId } : {}),
      ...(secretAccessKey ? { secretAccessKey } : {}),
    },
    migrateAtStart,
    maxJsonBytes: raw.MAX_JSON_BYTES,
  };
}
