// The artifact proxy (/api/2.0/mlflow-artifacts) and run artifact listing (under the API prefixes).
export { artifactRoutes } from './routes.ts';
export { runArtifactRoutes, runFileRoutes } from './run-routes.ts';
export { artifactKeyFromUrl, checkArtifactPath, keyOfProxiedUri } from './paths.ts';
export { requireStoreKey, storeKeyOf } from './store-keys.ts';
export { sendArtifact } from './http.ts';
