export * from './secrets.errors.js';
export { checkPrincipal, checkSecretName, isSecretName, MAX_SECRET_VALUE_BYTES } from './secret-rules.js';
export { SECRET_KEY_BYTES } from './secret-cipher.js';
export * from './principal-secret-store.js';
