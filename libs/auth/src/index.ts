export * from './principal.js';
export * from './api-keys/api-key.entity.js';
export * from './api-keys/api-key-store.js';
export * from './api-keys/api-key-verifier.js';
export { KEY_PREFIX, looksLikeApiKey } from './api-keys/key-material.js';
export * from './http/http-authenticator.js';
export * from './http/protected-resource.js';
export * from './jwt/jwt-verifier.js';
export { fetchFailureMessage, fetchRecoveryMessage, type JwksFetchFailure, type JwksFetchRecovery } from './jwt/jwks-cache.js';
