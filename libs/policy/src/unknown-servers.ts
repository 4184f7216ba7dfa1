import { closestKey, formatPath } from '@switchboard/config';
import { compileGlob } from './glob.js';
import type { PolicyDocument } from './policy-document.js';
import type { NamedServer } from './server-selectors.js';

/**
 * Rules whose `server:` glob matches no configured upstream, by name or alias (an alias
 * alone is aliasedServerSelectors' warning), with the name a typo most likely meant. Such a
 * rule never applies: a `deny` on `teem` leaves team's tools allowed. Told, not refused: the
 * server may not be configured yet. Every server, disabled ones too, is configured: enabling
 * one is a config edit the policy may be written ahead of. A config without any server says
 * nothing about which ones the policy is for, so nothing is told.
 */
export function unknownServerSelectors(doc: PolicyDocument, servers: readonly NamedServer[]): { path: string; reason: string }[] {
  if (servers.length === 0) return [];
  const names = servers.map((s) => s.name);
  const found: { path: string; reason: string }[] = [];
  for (const [role, rules] of Object.entries(doc.roles)) {
    rules.forEach((rule, i) => {
      if (rule.server === undefined) return;
      const glob = compileGlob(rule.server, 'name');
      if (servers.some((s) => glob.test(s.name) || (s.alias !== undefined && glob.test(s.alias)))) return;
      // A glob is no misspelt name: whatever is close to it is not what it meant.
      const meant = /[*?]/.test(rule.server) ? undefined : closestKey(rule.server, names);
      found.push({
        path: formatPath(['roles', role, i, 'server']),
        reason: `server: '${rule.server}' matches no upstream under mcpServers, so the rule never applies${meant ? ` (did you mean \`${meant}\`?)` : ''}`,
      });
    });
  }
  return found;
}
