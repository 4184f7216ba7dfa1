import { closestKey, formatPath } from '@switchboard/config';
import { compileGlob, type Glob } from './glob.js';
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

/** A rule whose `server:` glob matches no upstream's name: where both warnings below start. */
interface UnnamedSelector {
  path: string;
  server: string;
  glob: Glob;
}

/** Each rule whose `server:` matches no upstream by name, in the file's order. */
function* selectorsMatchingNoName(doc: PolicyDocument, servers: readonly NamedServer[]): Generator<UnnamedSelector> {
  for (const [role, rules] of Object.entries(doc.roles)) {
    for (const [i, rule] of rules.entries()) {
      if (rule.server === undefined) continue;
      const glob = compileGlob(rule.server, 'name');
      if (!servers.some((s) => glob.test(s.name))) yield { path: formatPath(['roles', role, i, 'server']), server: rule.server, glob };
    }
  }
}

/**
 * Rules whose `server:` glob matches no upstream's name but does match an alias. Such a
 * rule never applies: `server: fs` for `files` with `alias: fs` leaves a deny on fs
 * doing nothing while the `fs__*` tools it meant stay allowed. Told at load, not refused:
 * the server may simply not be configured yet.
 */
export function aliasedServerSelectors(doc: PolicyDocument, servers: readonly NamedServer[]): AliasedSelector[] {
  const found: AliasedSelector[] = [];
  for (const { path, server, glob } of selectorsMatchingNoName(doc, servers)) {
    const aliased = servers.filter((s) => s.alias !== undefined && glob.test(s.alias));
    if (aliased.length === 0) continue;
    const names = aliased.map((s) => `'${s.name}'`).join(', ');
    found.push({
      path,
      reason: `server: '${server}' matches no upstream's name, only the alias of ${names}, so the rule never applies; server: takes the name under mcpServers`,
    });
  }
  return found;
}

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
  for (const { path, server, glob } of selectorsMatchingNoName(doc, servers)) {
    if (servers.some((s) => s.alias !== undefined && glob.test(s.alias))) continue;
    // A glob is no misspelt name: whatever is close to it is not what it meant.
    const meant = /[*?]/.test(server) ? undefined : closestKey(server, names);
    found.push({
      path,
      reason: `server: '${server}' matches no upstream under mcpServers, so the rule never applies${meant ? ` (did you mean \`${meant}\`?)` : ''}`,
    });
  }
  return found;
}
