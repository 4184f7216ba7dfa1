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
}

/** A caller on a loopback listener with `auth.mode: none` that sent no credential. */
export const LOOPBACK_PRINCIPAL: AuthPrincipal = Object.freeze({ id: 'anonymous', authMethod: 'loopback', roles: Object.freeze([]) });
