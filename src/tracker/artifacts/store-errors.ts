import { ObjectStoreError } from '../../platform/objects/index.ts';
import { TrackerError } from '../errors.ts';

/**
 * What an object store failure means to an MLflow client. The client retries 5xx (except 501), so a failure that
 * only an operator can fix (missing bucket, refused credentials) is a non-retried INVALID_STATE (400) whose
 * message names the bucket and endpoint; an unreachable endpoint is TEMPORARILY_UNAVAILABLE (503, retried).
 */
export function storeFailure(err: unknown): unknown {
  if (!(err instanceof ObjectStoreError)) return err;
  switch (err.code) {
    case 'NOT_FOUND':
      return new TrackerError('RESOURCE_DOES_NOT_EXIST', err.message);
    case 'INVALID_KEY':
      return new TrackerError('INVALID_PARAMETER_VALUE', err.message);
    case 'NO_SUCH_BUCKET':
      return new TrackerError('INVALID_STATE', `Artifact store misconfigured (NoSuchBucket): ${err.message}`);
    case 'ACCESS_DENIED':
      return new TrackerError('INVALID_STATE', `Artifact store misconfigured (credentials refused): ${err.message}`);
    case 'UNREACHABLE':
      return new TrackerError('TEMPORARILY_UNAVAILABLE', `Artifact store unavailable (connection refused or timed out): ${err.message}`);
    default:
      return new TrackerError('INTERNAL_ERROR', `Artifact store failure: ${err.message}`);
  }
}

/** Runs a store call, turning its failure into the tracker's error. */
export async function inStore<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw storeFailure(err);
  }
}
