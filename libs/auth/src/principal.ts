/**
 * Who made a request, as the transport edge established it. `authMethod` says how:
 * `api-key`, `loopback` (no credential, on a loopback listener with `auth.mode: none`),
 * `stdio` (the user running `switchboard stdio`). Roles come from the credential and are
 * what policies will match on.
 */
export interface AuthPrincipal {
  id: string;
  authMethod: string;
  roles: readonly string[];
  /** From a token's groups claim; policies will map groups to roles. */
  groups?: readonly string[];
  /**
   * What a long-lived session must stay true to (credentialLapse): the API key's row id (whose
   * row then says whether the key still serves), and when the credential stops being accepted
   * (epoch ms; a token's exp plus the clock tolerance; for a key, its row's expiry as it was).
   * A session's requests are checked one by one; its streams are checked again from time to
   * time, against the latest credential its owner sent (renewCredential).
   */
  credential?: { keyId?: number; expiresAt?: number };
}

/** A caller on a loopback listener with `auth.mode: none` that sent no credential. */
export const LOOPBACK_PRINCIPAL: AuthPrincipal = Object.freeze({ id: 'anonymous', authMethod: 'loopback', roles: Object.freeze([]) });

/**
 * Whether a request's caller is the one a session was opened by: the same principal, by the
 * same method, with the same roles and groups. Policies judge a session's requests by the
 * roles it was opened with; so a token reissued with fewer roles, or a key and a token that
 * share a name, must not carry on in it (the host gets 404 and opens a new session).
 */
export function isSameCaller(owner: Partial<AuthPrincipal> & Pick<AuthPrincipal, 'id' | 'authMethod'>, caller: AuthPrincipal): boolean {
  return (
    owner.id === caller.id &&
    owner.authMethod === caller.authMethod &&
    sameSet(owner.roles ?? [], caller.roles) &&
    sameSet(owner.groups ?? [], caller.groups ?? [])
  );
}

/**
 * A request in a session, by its owner (isSameCaller), with a credential that lasts longer
 * than the one the session holds: a token reissued with the same claims. The session's
 * credential then lasts as long, so its streams are not ended at the first token's expiry
 * while the host keeps sending fresh ones.
 */
export function renewCredential(owner: Pick<AuthPrincipal, 'credential'>, caller: Pick<AuthPrincipal, 'credential'>): void {
  const held = owner.credential?.expiresAt;
  const fresh = caller.credential?.expiresAt;
  if (held === undefined || fresh === undefined || fresh <= held) return;
  owner.credential = { ...owner.credential, expiresAt: fresh };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((item) => set.has(item));
}
