import { closestKey, formatPath } from '@switchboard/config';
import { sanitizePrefix, type NamespaceMode } from '@switchboard/core';
import { compileGlob } from './glob.js';
import type { PolicyDocument } from './policy-document.js';

/** What decides the public tool names of a config's upstreams (a GatewayConfig is one). */
export interface PublicNaming {
  separator: string;
  /** The top-level mode; a server's own `namespace` overrides it. */
  namespace: NamespaceMode;
  servers: readonly { name: string; alias?: string; namespace?: NamespaceMode }[];
}

const WHITESPACE = /\s/;
const WILDCARD = /[*?]/;

/**
 * Rules whose `tool:` no public tool name can match, so that they never apply:
 *
 * - whitespace (`"team__shell "`): a public name has none, since the catalog publishes a
 *   character hosts refuse as `_` (core's naming.ts). Judged without a config too;
 * - with a config, a pattern that fits none of the prefixes its upstreams' tools are
 *   published under: `tool: read_file` (the upstream's own name) or `demo__*` next to
 *   `server: team`, or `teem__*`. Only upstreams in `namespace: prefix` are judged: under
 *   `auto` or `none` a tool may be published bare, and then almost any pattern can match.
 *
 * Told at load and by `policy lint`, not refused: the rule is valid, and the server it is
 * for may not be configured yet. A config without servers is nothing to compare with.
 */
export function unmatchableToolPatterns(doc: PolicyDocument, naming: PublicNaming | undefined): { path: string; reason: string }[] {
  const found: { path: string; reason: string }[] = [];
  for (const [role, rules] of Object.entries(doc.roles)) {
    rules.forEach((rule, i) => {
      if (rule.tool === undefined) return;
      const reason = WHITESPACE.test(rule.tool) ? whitespaceReason(rule.tool) : naming && prefixReason(rule.tool, rule.server, naming);
      if (reason) found.push({ path: formatPath(['roles', role, i, 'tool']), reason });
    });
  }
  return found;
}

function whitespaceReason(tool: string): string {
  const trimmed = tool.trim();
  const meant = trimmed !== '' && !WHITESPACE.test(trimmed) ? ` (did you mean \`${trimmed}\`?)` : '';
  return `tool: '${tool}' has whitespace, which no public tool name has (the gateway publishes such a character as _), so the rule never applies${meant}`;
}

/** Why `tool` fits none of the prefixes of the upstreams the rule can select; undefined when it can match, or that is not known. */
function prefixReason(tool: string, server: string | undefined, naming: PublicNaming): string | undefined {
  const glob = server === undefined ? undefined : compileGlob(server, 'name');
  // By name, as server: matches; one that matches only an alias, or nothing, is the server: checks' to tell.
  const selected = naming.servers.filter((s) => glob === undefined || glob.test(s.name));
  if (selected.length === 0) return undefined;
  if (selected.some((s) => (s.namespace ?? naming.namespace) !== 'prefix')) return undefined;
  const sep = naming.separator;
  // As the catalog writes the prefix (core's assignPublicNames): the alias, else the name, made safe.
  const prefixOf = (s: { name: string; alias?: string }) => `${sanitizePrefix(s.alias ?? s.name)}${sep}`;
  if (selected.some((s) => mayStartWith(tool, prefixOf(s)))) return undefined;

  const names = andList(selected.map((s) => s.name));
  const one = selected.length === 1 ? selected[0] : undefined;
  const whose = server === undefined ? names : `${names}, which server: '${server}' selects,`;
  const shape = one ? `${prefixOf(one)}<name>` : `<alias or name>${sep}<name>`;
  if (!tool.includes(sep)) {
    const meant = one ? ` (did you mean \`${prefixOf(one)}${tool}\`?)` : '';
    return `tool: '${tool}' has no namespace separator '${sep}', but with namespace: prefix every tool of ${whose} is ${shape}, so the rule never applies${meant}`;
  }
  const written = tool.slice(0, tool.indexOf(sep) + sep.length);
  if (server !== undefined) {
    // The prefix may be another upstream's: then the server: is as likely the slip as the tool:.
    const owners = naming.servers.filter((s) => prefixOf(s) === written).map((s) => s.name);
    const owned = owners.length > 0 ? ` (${written} is the prefix of ${andList(owners)}'s tools)` : '';
    const their = one ? 'its tools are all' : 'their tools are';
    return `tool: '${tool}' matches no tool of ${names}, which server: '${server}' selects: with namespace: prefix ${their} ${shape}, so the rule never applies${owned}`;
  }
  const prefixes = selected.map(prefixOf);
  const meantPrefix = WILDCARD.test(written) ? undefined : closestKey(written, prefixes);
  const meant = meantPrefix ? ` (did you mean \`${meantPrefix}${tool.slice(written.length)}\`?)` : '';
  return (
    `tool: '${tool}' matches no tool of a configured upstream: with namespace: prefix each one's tools are <alias or name>${sep}<name>, ` +
    `and none has the prefix ${written}, so the rule never applies${meant}`
  );
}

/**
 * Whether a name glob (`*` any run, `?` any one character) matches some name that starts
 * with `prefix`: the glob is run over the prefix, keeping every position it can be at; any
 * position left can go on to match some rest of a name.
 */
export function mayStartWith(glob: string, prefix: string): boolean {
  const closure = (positions: Set<number>) => {
    for (const p of positions) if (glob[p] === '*') positions.add(p + 1);
    return positions;
  };
  let positions = closure(new Set([0]));
  for (const c of prefix) {
    const next = new Set<number>();
    for (const p of positions) {
      if (p >= glob.length) continue;
      if (glob[p] === '*') next.add(p);
      else if (glob[p] === '?' || glob[p] === c) next.add(p + 1);
    }
    positions = closure(next);
    if (positions.size === 0) return false;
  }
  return true;
}

function andList(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
