import { MAX_CALLER_NAME_CHARS, canonicalCallerName } from '@switchboard/core';
import { SecretError, SecretErrorCode } from './secrets.errors.js';

/** Shaped like an environment variable name, since that is where most secrets end up. */
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Enough for a PEM key or a service-account JSON; anything bigger is likely a mistake. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;

export const isSecretName = (name: string): boolean => SECRET_NAME.test(name);

export function checkSecretName(name: string): void {
  if (!isSecretName(name)) {
    throw invalid(`secret name '${name.slice(0, 80)}' must be a letter or _ followed by up to 63 letters, digits or _`);
  }
}

/**
 * The principal as secrets are stored and looked up under it: a caller's name (callerName),
 * so a key named `alice` (`alice`, or `key:alice`) and a token user `jwt:alice` never share
 * a secret; a token's claims are set at the issuer and may repeat a key's name.
 */
export function checkPrincipal(principal: string): string {
  if (principal.length === 0) throw invalid('principal must not be empty');
  // As long as any caller's name can be: a token user's (jwt:NAME) included.
  if (principal.length > MAX_CALLER_NAME_CHARS) throw invalid(`principal must be at most ${MAX_CALLER_NAME_CHARS} characters, got ${principal.length}`);
  const name = canonicalCallerName(principal);
  if (name === undefined) {
    throw invalid(
      `principal '${principal.slice(0, 80)}' must be an API key's name (alice), or jwt:NAME for a token's principal claim, ` +
        'stdio:USER for switchboard stdio without a key, loopback:anonymous for a loopback caller without one',
    );
  }
  return name;
}

/** The value itself never goes into the message. */
export function checkSecretValue(name: string, value: string): void {
  if (value.length === 0) throw invalid(`the value of ${name} must not be empty`);
  // No server could use it (spawn and HTTP refuse it, with an error quoting the value).
  if (value.includes('\u0000')) throw invalid(`the value of ${name} holds a NUL byte, which no environment variable or header can carry`);
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_SECRET_VALUE_BYTES) throw invalid(`the value of ${name} is ${bytes} bytes; at most ${MAX_SECRET_VALUE_BYTES} are allowed`);
}

const invalid = (message: string) => new SecretError(SecretErrorCode.Invalid, message);
