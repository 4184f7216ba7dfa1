/**
 * Who a caller is, as one string: the name a per-caller state is keyed by (upstream secrets,
 * per-principal connections, the inbox, remembered approvals, rate-limit buckets, the
 * policy's `users:`) and the name an administrator writes (`secrets set --principal`).
 *
 * A caller is a principal *and* how it authenticated (isSameCaller compares both): an API
 * key named `alice` and a token whose principal claim is `alice` are two people, since a
 * token's claims (`email`, `preferred_username`) are set at the issuer, not here. So an API
 * key's name stands alone (`alice`, what `keys create --name` made) and every other caller
 * carries its method: `jwt:alice`, `stdio:bob` (the user running `switchboard stdio` without
 * a key), `loopback:anonymous`. Key names have no `:`, so no key's name is another caller's.
 */
export interface CallerIdentity {
  id: string;
  authMethod: string;
}

/** The method of an API key holder; the one written without a prefix. */
export const API_KEY_METHOD = 'api-key';
/** Prefixes an administrator may write, by the method they name (`key:alice` is `alice`). */
const PREFIXES: Readonly<Record<string, string>> = { key: API_KEY_METHOD, jwt: 'jwt', stdio: 'stdio', loopback: 'loopback' };

export function callerName(caller: CallerIdentity): string {
  return caller.authMethod === API_KEY_METHOD ? caller.id : `${caller.authMethod}:${caller.id}`;
}

/**
 * The caller a written name means: `alice` or `key:alice` an API key, `jwt:SUBJECT`,
 * `stdio:USER`, `loopback:anonymous`. Undefined for a name with another prefix or nothing
 * after it (a stdio user without a passwd entry is `stdio:uid:1000`: only the first `:` splits).
 */
export function parseCallerName(name: string): CallerIdentity | undefined {
  const colon = name.indexOf(':');
  if (colon < 0) return name === '' ? undefined : { id: name, authMethod: API_KEY_METHOD };
  const authMethod = PREFIXES[name.slice(0, colon)];
  const id = name.slice(colon + 1);
  return authMethod === undefined || id === '' ? undefined : { id, authMethod };
}

/** The caller names as stored and compared: `key:alice` is written `alice`. Undefined when not a caller name. */
export function canonicalCallerName(name: string): string | undefined {
  const caller = parseCallerName(name);
  return caller && callerName(caller);
}
