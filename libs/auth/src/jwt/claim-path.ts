/**
 * A claim of a token by its configured path (`auth.jwt.claims.*`). Dots separate nested
 * claims (`realm_access.roles`), but a claim's own name may hold dots too: Auth0 and Okta
 * require namespaced custom claims (`https://corp.example.com/roles`, one top-level key), and
 * Keycloak puts client roles under the client id (`resource_access.<client id>.roles`),
 * which is often a URL (`https://gateway.internal/mcp`). Splitting on every dot found no such
 * claim, and the caller silently had no roles. So the path is resolved against the token
 * itself: at each object, the longest prefix of what remains of the path that is a key of
 * that object and is followed by a dot or the end. A plain nested path still resolves as
 * before; where both `a.b` and `a` -> `b` exist, the key `a.b` wins.
 *
 * Only own keys count: a path like `constructor` must not find Object's prototype.
 * Undefined when the path leads nowhere.
 */
export function claimAt(payload: unknown, path: string): unknown {
  let value = payload;
  let rest = path;
  for (;;) {
    if (typeof value !== 'object' || value === null) return undefined;
    const key = longestKeyOf(value, rest);
    if (key === undefined) return undefined;
    value = (value as Record<string, unknown>)[key];
    if (key.length === rest.length) return value;
    rest = rest.slice(key.length + 1);
  }
}

/** The longest own key of `object` that `rest` starts with, followed there by a dot or the end. */
function longestKeyOf(object: object, rest: string): string | undefined {
  if (Object.hasOwn(object, rest)) return rest;
  // Each shorter candidate ends just before a dot, the last dot first.
  for (let dot = rest.lastIndexOf('.'); dot > 0; dot = rest.lastIndexOf('.', dot - 1)) {
    const key = rest.slice(0, dot);
    if (Object.hasOwn(object, key)) return key;
  }
  return undefined;
}
