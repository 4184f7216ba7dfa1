import { userInfo } from 'node:os';
import type { Principal } from '@switchboard/relay';

/**
 * HTTP callers before authentication exists: the daemon refuses to listen off loopback, so
 * a caller is someone on this machine, not identified further.
 */
export const LOOPBACK_PRINCIPAL: Principal = Object.freeze({ id: 'anonymous', authMethod: 'loopback' });

/** `switchboard stdio` serves the one host that launched it, as the user running it. */
export function stdioPrincipal(): Principal {
  let id: string;
  try {
    id = userInfo().username;
  } catch {
    // No passwd entry (some containers): the uid still says who.
    id = `uid:${process.getuid?.() ?? 'unknown'}`;
  }
  return { id, authMethod: 'stdio' };
}
