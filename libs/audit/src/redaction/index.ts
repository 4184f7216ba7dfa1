export { checkRedactionOptions, createRedactor, type RedactionOptions, type Redactor } from './redactor.js';
export { argumentsDigest, canonicalJson, canonicalTextDigest } from './canonical-json.js';
export {
  DEFAULT_SECRET_KEYS,
  DEFAULT_VALUE_PATTERNS,
  type SecretKeyPattern,
  type SecretValuePattern,
} from './secret-patterns.js';
