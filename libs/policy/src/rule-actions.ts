import { formatPath } from '@switchboard/config';

/** What an item selector picks, and the actions requests on that kind of item can carry. */
const KINDS = {
  tool: { items: 'tools', actions: ['list', 'call'] },
  prompt: { items: 'prompts', actions: ['list', 'get', 'complete'] },
  resource: { items: 'resources and templates', actions: ['list', 'read', 'subscribe', 'complete'] },
} as const;

/** Where each action does apply: the hint given with a rule that names it for another kind. */
const WHERE: Readonly<Record<string, string>> = {
  call: 'tools: select them with tool:',
  get: 'prompts: select them with prompt:',
  read: 'resources: select them with resource:',
  subscribe: 'resources: select them with resource:',
  complete: 'prompts and resource templates: select them with prompt: or resource:',
  sample: 'upstreams: select them with server: alone',
  elicit: 'upstreams: select them with server: alone',
  log: 'upstreams: select them with server: alone',
};

/** The part of a rule this reads: its actions and which item selector it has. */
interface RuleShape {
  allow?: string | string[];
  deny?: string | string[];
  tool?: string;
  prompt?: string;
  resource?: string;
}

/**
 * The actions of a rule that no request on the kind of item it selects can carry (`call`
 * with `resource:`), and why, or undefined when every action applies. Such an action is
 * never matched: `allow: call, resource: github__*` meant `tool:` and allows nothing. A rule
 * without tool:, prompt: or resource: (a server or everything) takes every action, as `*`
 * does.
 */
export function outsideSelector(rule: RuleShape): { actions: string[]; applying: string[]; why: (outcome: string) => string } | undefined {
  const selector = rule.tool !== undefined ? 'tool' : rule.prompt !== undefined ? 'prompt' : rule.resource !== undefined ? 'resource' : undefined;
  if (selector === undefined) return undefined;
  // A confirm rule's own check already says it takes tools (confirm: call).
  const named = [rule.allow ?? rule.deny ?? []].flat();
  if (named.includes('*')) return undefined;
  const kind = KINDS[selector];
  const accepted: readonly string[] = kind.actions;
  const actions = named.filter((action) => !accepted.includes(action));
  if (actions.length === 0) return undefined;
  const applying = named.filter((action) => accepted.includes(action));
  const why = (outcome: string) =>
    `${andList(actions)} ${actions.length === 1 ? 'does' : 'do'} not apply to ${kind.items}, which ${selector}: selects ` +
    `(they take ${andList(accepted)}), so ${outcome}; ${actions[0]} applies to ${WHERE[actions[0]!]}`;
  return { actions, applying, why };
}

/**
 * Rules that name, beside actions that apply, some that cannot (`[list, call]` with
 * `resource:`): loaded, since what applies still works, but told at load and by `policy lint`,
 * at the rule's action key. A rule none of whose actions apply is refused by the schema.
 */
export function actionsOutsideSelectors(doc: { roles: Record<string, readonly RuleShape[]> }): { path: string; reason: string }[] {
  const found: { path: string; reason: string }[] = [];
  for (const [role, rules] of Object.entries(doc.roles)) {
    rules.forEach((rule, index) => {
      const outside = outsideSelector(rule);
      if (!outside || outside.applying.length === 0) return;
      const key = rule.allow !== undefined ? 'allow' : 'deny';
      found.push({ path: formatPath(['roles', role, index, key]), reason: outside.why(`the rule applies to ${andList(outside.applying)} only`) });
    });
  }
  return found;
}

function andList(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
