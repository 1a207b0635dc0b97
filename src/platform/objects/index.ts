// The object store port: a folder (embedded default) or any S3-compatible server.
export type { ObjectStore, ListEntry, PutBody, PutOptions, TreeEntry } from './store.ts';
export { ObjectStoreError, type ObjectStoreErrorCode } from './errors.ts';
export { checkKey, checkPrefix } from './keys.ts';
export { createFolderStore } from './folder-store.ts';
export { createS3Store, type S3StoreOptions } from './s3-store.ts';
export { parseArtifactRoot, openArtifactRoot, type ArtifactRoot } from './artifact-root.ts';
export { readObject } from './streams.ts';
export { openObjectStore } from './settings.ts';
