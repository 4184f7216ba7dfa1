import { userInfo } from 'node:os';
import type { AuthPrincipal } from '@switchboard/auth';

/** `switchboard stdio` serves the one host that launched it, as the user running it. */
export function stdioPrincipal(): AuthPrincipal {
  let id: string;
  try {
    id = userInfo().username;
  } catch {
    // No passwd entry (some containers): the uid still says who.
    id = `uid:${process.getuid?.() ?? 'unknown'}`;
  }
  return { id, authMethod: 'stdio', roles: [] };
}
