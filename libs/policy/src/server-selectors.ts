import { formatPath } from '@switchboard/config';
import { compileGlob } from './glob.js';
import type { PolicyDocument } from './policy-document.js';

/** An upstream as rules select it: `server:` matches its name; the alias only prefixes its items. */
export interface NamedServer {
  name: string;
  alias?: string;
}

/** A rule whose `server:` names an alias, at its path in the policy file. */
export interface AliasedSelector {
  path: string;
  reason: string;
}

/**
 * Rules whose `server:` glob matches no upstream's name but does match an alias. Such a
 * rule never applies: `server: fs` for `files` with `alias: fs` leaves a deny on fs
 * doing nothing while the `fs__*` tools it meant stay allowed. Told at load, not refused:
 * the server may simply not be configured yet.
 */
export function aliasedServerSelectors(doc: PolicyDocument, servers: readonly NamedServer[]): AliasedSelector[] {
  const found: AliasedSelector[] = [];
  for (const [role, rules] of Object.entries(doc.roles)) {
    rules.forEach((rule, i) => {
      if (rule.server === undefined) return;
      const glob = compileGlob(rule.server, 'name');
      if (servers.some((s) => glob.test(s.name))) return;
      const aliased = servers.filter((s) => s.alias !== undefined && glob.test(s.alias));
      if (aliased.length === 0) return;
      const names = aliased.map((s) => `'${s.name}'`).join(', ');
      found.push({
        path: formatPath(['roles', role, i, 'server']),
        reason: `server: '${rule.server}' matches no upstream's name, only the alias of ${names}, so the rule never applies; server: takes the name under mcpServers`,
      });
    });
  }
  return found;
}
