import { createMongoAbility, subject as asSubject, type MongoAbility } from '@casl/ability';
import { globToRegExp, prefixRegExp } from './glob.js';
import type { PolicyDocument, PolicyRule } from './policy-document.js';

/** What policies are about. A server rule without a name selects all three. */
export type SubjectType = 'Tool' | 'Prompt' | 'Resource';

/** The fields a rule can test: the upstream, the public name or URI, and the arguments. */
export interface SubjectFields {
  server: string;
  /** Tools and prompts: the public name. */
  name?: string;
  /** Resources and templates: the public URI. */
  uri?: string;
  args?: unknown;
}

/** Whom a decision is for; roles and groups come from the key or token. */
export interface PolicyPrincipal {
  id: string;
  roles?: readonly string[];
  groups?: readonly string[];
}

export interface PolicyDecision {
  allowed: boolean;
  /** The rule that decided: its id, or policy:default-allow / policy:default-deny. */
  rule: string;
}

interface RawRule {
  action: string | string[];
  subject: string | string[];
  conditions?: Record<string, unknown>;
  inverted?: boolean;
  reason: string;
}

/** Actions whose permission also shows the item in lists, so seeing and using never disagree. */
const SHOWN_BY = new Set(['call', 'get', 'read', 'complete']);

/**
 * A policy document compiled to CASL rules: one ability per set of roles, built on first
 * use and kept until the policy changes. Precedence, lowest first: the default effect, then
 * every allow, then every deny; so a deny always wins over an allow, and any rule over the
 * default.
 */
export class CompiledPolicy {
  private readonly allowRules: Map<string, RawRule[]>;
  private readonly denyRules: Map<string, RawRule[]>;
  private readonly abilities = new Map<string, MongoAbility>();

  constructor(
    private readonly doc: PolicyDocument,
    readonly defaultEffect: 'allow' | 'deny',
  ) {
    this.allowRules = new Map();
    this.denyRules = new Map();
    for (const [role, rules] of Object.entries(doc.roles)) {
      const allow: RawRule[] = [];
      const deny: RawRule[] = [];
      rules.forEach((rule, index) => {
        for (const raw of rawRules(rule, rule.id ?? `${role}#${index + 1}`)) (raw.inverted ? deny : allow).push(raw);
      });
      this.allowRules.set(role, allow);
      this.denyRules.set(role, deny);
    }
  }

  /** The principal's roles: its own (key or token), its user entry, its groups', everyone's. */
  rolesOf(principal: PolicyPrincipal): string[] {
    const roles = new Set([...(principal.roles ?? []), ...(this.doc.users[principal.id] ?? []), ...this.doc.everyone]);
    for (const group of principal.groups ?? []) for (const role of this.doc.groups[group] ?? []) roles.add(role);
    return [...roles].filter((role) => this.allowRules.has(role)).sort();
  }

  decide(principal: PolicyPrincipal, action: string, type: SubjectType, fields: SubjectFields): PolicyDecision {
    const ability = this.abilityFor(this.rolesOf(principal));
    const rule = ability.relevantRuleFor(action, asSubject(type, { ...fields }));
    if (!rule) return { allowed: false, rule: 'policy:default-deny' };
    return { allowed: !rule.inverted, rule: rule.reason ?? 'policy' };
  }

  private abilityFor(roles: string[]): MongoAbility {
    const key = roles.join('\n');
    let ability = this.abilities.get(key);
    if (!ability) {
      const rules: RawRule[] = [];
      if (this.defaultEffect === 'allow') rules.push({ action: 'manage', subject: 'all', reason: 'policy:default-allow' });
      for (const role of roles) rules.push(...this.allowRules.get(role)!);
      for (const role of roles) rules.push(...this.denyRules.get(role)!);
      ability = createMongoAbility(rules as never);
      this.abilities.set(key, ability);
    }
    return ability;
  }
}

/** One document rule as CASL rules: itself, and the list rule its action implies. */
function rawRules(rule: PolicyRule, reason: string): RawRule[] {
  const inverted = rule.deny !== undefined;
  const actions = [rule.allow ?? rule.deny!].flat().map((a) => (a === '*' ? 'manage' : a));
  const subject: string | string[] = rule.tool !== undefined ? 'Tool' : rule.prompt !== undefined ? 'Prompt' : rule.resource !== undefined ? 'Resource' : rule.server !== undefined ? ['Tool', 'Prompt', 'Resource'] : 'all';
  const selectors: Record<string, unknown> = {};
  if (rule.server !== undefined) selectors.server = { $regex: globToRegExp(rule.server) };
  const nameGlob = rule.tool ?? rule.prompt;
  if (nameGlob !== undefined) selectors.name = { $regex: globToRegExp(nameGlob) };
  if (rule.resource !== undefined) selectors.uri = { $regex: globToRegExp(rule.resource) };
  const argConditions: Record<string, unknown> = {};
  for (const [field, test] of Object.entries(rule.when ?? {})) {
    if (test.eq !== undefined) argConditions[field] = { $eq: test.eq };
    else if (test.in !== undefined) argConditions[field] = { $in: test.in };
    else if (test.notIn !== undefined) argConditions[field] = { $nin: test.notIn };
    else argConditions[field] = { $regex: prefixRegExp(test.startsWith!) };
  }
  const conditionsOf = (all: Record<string, unknown>) => (Object.keys(all).length > 0 ? all : undefined);
  const own: RawRule = { action: actions, subject, reason, inverted, conditions: conditionsOf({ ...selectors, ...argConditions }) };
  const out = [own];
  const shown = actions.filter((a) => SHOWN_BY.has(a));
  // An allowed use shows the item whatever its arguments; a denied use hides it only when
  // it is denied for every argument (an argument condition leaves it listed).
  if (shown.length > 0 && !actions.includes('list') && (!inverted || rule.when === undefined)) {
    out.push({ action: 'list', subject, reason, inverted, conditions: conditionsOf(selectors) });
  }
  return out;
}
