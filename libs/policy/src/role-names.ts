import { closestKey } from '@switchboard/config';

/**
 * Why a role given to a caller (by a key, `users:`, `groups:` or `everyone:`) brings no rule:
 * the policy defines no role of that name. Undefined when it does. A misspelt role is no
 * error at the edge, only missing access later, so the role it most likely meant is named.
 */
export function undefinedRoleReason(role: string, defined: readonly string[]): string | undefined {
  if (defined.includes(role)) return undefined;
  const meant = closestKey(role, defined);
  return `no role '${role}' is defined under roles${meant ? ` (did you mean \`${meant}\`?)` : ''}`;
}
