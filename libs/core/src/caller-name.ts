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
/**
 * What an API key's name may be (`keys create --name`): no `:`, so that no key's name is
 * another caller's. Here, not in the key store, since the policy's `users:` is judged by it too.
 */
export const API_KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
/** API_KEY_NAME in words, for the refusals that cite it. */
export const API_KEY_NAME_RULE = "1-64 ASCII letters (A-Z, a-z), digits, '.', '_', '@' or '-', starting with a letter or digit";
/** Prefixes an administrator may write, by the method they name (`key:alice` is `alice`). */
const PREFIXES: Readonly<Record<string, string>> = { key: API_KEY_METHOD, jwt: 'jwt', stdio: 'stdio', loopback: 'loopback' };

/**
 * The longest principal a caller may have: a token's principal claim is refused beyond it
 * (key names stop at 64). Everything that takes a caller name (secrets, the policy's
 * `users:`) takes MAX_CALLER_NAME_CHARS, so whoever can authenticate can be named there.
 */
export const MAX_PRINCIPAL_CHARS = 256;
/** The longest caller name as written: the longest kind (`loopback:`) and the longest principal. */
export const MAX_CALLER_NAME_CHARS = Math.max(...Object.keys(PREFIXES).map((prefix) => prefix.length + 1)) + MAX_PRINCIPAL_CHARS;

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
  const prefix = name.slice(0, colon);
  // Own keys only: `constructor:bob` must not find Object's constructor for a method.
  const authMethod = Object.hasOwn(PREFIXES, prefix) ? PREFIXES[prefix] : undefined;
  const id = name.slice(colon + 1);
  return authMethod === undefined || id === '' ? undefined : { id, authMethod };
}

/** The caller names as stored and compared: `key:alice` is written `alice`. Undefined when not a caller name. */
export function canonicalCallerName(name: string): string | undefined {
  const caller = parseCallerName(name);
  return caller && callerName(caller);
}

/**
 * A caller name as policies and limits match it: NFC, then upper case, then lower case (a
 * cheap case fold: ß and SS, ς and σ meet), NFC again. An issuer's `preferred_username` or
 * `email` may carry the case its user typed at sign-in, and a decomposed é is the same letter
 * as a composed one: matched exactly, `Mallory` would sidestep a deny written for `mallory`,
 * and each spelling would get a rate-limit bucket of its own. See docs/auth.md, Name case.
 */
export function foldCallerName(name: string): string {
  return name.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}

/** callerKey of each caller object met: a session's principal is asked on every call it makes. */
const keys = new WeakMap<CallerIdentity, string>();

/** The key a caller's policy entry and rate-limit buckets are found by: its callerName, folded. */
export function callerKey(caller: CallerIdentity): string {
  let key = keys.get(caller);
  if (key === undefined) {
    key = foldCallerName(callerName(caller));
    keys.set(caller, key);
  }
  return key;
}
