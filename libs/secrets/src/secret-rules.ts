import { SecretError, SecretErrorCode } from './secrets.errors.js';

/** Shaped like an environment variable name, since that is where most secrets end up. */
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_PRINCIPAL_CHARS = 200;
/** Enough for a PEM key or a service-account JSON; anything bigger is likely a mistake. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;

export const isSecretName = (name: string): boolean => SECRET_NAME.test(name);

export function checkSecretName(name: string): void {
  if (!isSecretName(name)) {
    throw invalid(`secret name '${name.slice(0, 80)}' must be a letter or _ followed by up to 63 letters, digits or _`);
  }
}

export function checkPrincipal(principal: string): void {
  if (principal.length === 0) throw invalid('principal must not be empty');
  if (principal.length > MAX_PRINCIPAL_CHARS) throw invalid(`principal must be at most ${MAX_PRINCIPAL_CHARS} characters, got ${principal.length}`);
}

/** The value itself never goes into the message. */
export function checkSecretValue(name: string, value: string): void {
  if (value.length === 0) throw invalid(`the value of ${name} must not be empty`);
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_SECRET_VALUE_BYTES) throw invalid(`the value of ${name} is ${bytes} bytes; at most ${MAX_SECRET_VALUE_BYTES} are allowed`);
}

const invalid = (message: string) => new SecretError(SecretErrorCode.Invalid, message);
