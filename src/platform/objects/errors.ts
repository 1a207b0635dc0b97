export type ObjectStoreErrorCode =
  | 'NOT_FOUND'
  | 'TOO_LARGE'
  | 'INVALID_KEY'
  | 'NO_SUCH_BUCKET'
  | 'ACCESS_DENIED'
  | 'UNREACHABLE'
  | 'FAILED';

// The one error the object store port throws. Messages name the store (describe()) and the key, never a secret.
export class ObjectStoreError extends Error {
  constructor(
    readonly code: ObjectStoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ObjectStoreError';
  }
}
