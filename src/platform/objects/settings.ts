import { optionalStr, type Env, loadConfig } from '../config.ts';
import { openArtifactRoot } from './artifact-root.ts';
import type { ObjectStore } from './store.ts';

// Where a service keeps objects it shares with another (dashboard pages: explore writes, the runtime reads): a folder
// path or `s3://bucket/prefix`, with the S3 connection from SVC_S3_ENDPOINT_URL and a credential pair taken whole,
// OBJSTORE_* first, else AWS_* (the tracker reads the same pairs for its artifact root).
const s3Shape = {
  S3_ENDPOINT_URL: optionalStr(),
  OBJSTORE_ACCESS_KEY_ID: optionalStr(),
  OBJSTORE_SECRET_ACCESS_KEY: optionalStr(),
  AWS_ACCESS_KEY_ID: optionalStr(),
  AWS_SECRET_ACCESS_KEY: optionalStr(),
  AWS_DEFAULT_REGION: optionalStr(),
};

export function openObjectStore(uri: string, env: Env): ObjectStore {
  const raw = loadConfig(s3Shape, env);
  const [accessKeyId, secretAccessKey] = raw.OBJSTORE_ACCESS_KEY_ID
    ? [raw.OBJSTORE_ACCESS_KEY_ID, raw.OBJSTORE_SECRET_ACCESS_KEY]
    : [raw.AWS_ACCESS_KEY_ID, raw.AWS_SECRET_ACCESS_KEY];
  return openArtifactRoot(uri, {
    ...(raw.S3_ENDPOINT_URL ? { endpoint: raw.S3_ENDPOINT_URL } : {}),
    ...(raw.AWS_DEFAULT_REGION ? { region: raw.AWS_DEFAULT_REGION } : {}),
    ...(accessKeyId ? { accessKeyId } : {}),
    ...(secretAccessKey ? { secretAccessKey } : {}),
  });
}
