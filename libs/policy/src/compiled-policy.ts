import { createRequire } from 'node:module';
import type * as Casl from '@casl/ability';
import { callerKey, canonicalCallerName, foldCallerName } from '@switchboard/core';
import { type ArgConditions, compileArgConditions } from './arg-conditions.js';
import { compileGlob, type Glob } from './glob.js';
import type { PolicyDocument, PolicyRule } from './policy-document.js';

/** What policies are about. A server rule without a name selects all three. */
/** Server: what an upstream asks of the user through the gateway (`sample`, `elicit`). */
export type SubjectType = 'Tool' | 'Prompt' | 'Resource' | 'Server';

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
  /** How it authenticated: `users:` names a caller as callerName writes it (a key `alice`, a token `jwt:alice`). */
  authMethod: string;
  roles?: readonly string[];
  groups?: readonly string[];
}

export interface PolicyDecision {
  allowed: boolean;
  /** Allowed only once a human approves (a `confirm` rule decided). */
  confirm?: true;
  /** A confirm rule's `approvers`: the roles one of whose members (not the caller) approves. */
  approvers?: readonly string[];
  /** The rule that decided: its id, or policy:default-allow / policy:default-deny. */
  rule: string;
}

interface RawRule {
  action: string | string[];
  subject: string | string[];
  /** The rule's `when:`, judged by our own matcher (not CASL's MongoDB one: see arg-conditions.ts). */
  conditions?: ArgConditions;
  inverted?: boolean;
  /** A `confirm` rule: allows, but asks a human first. */
  confirm?: boolean;
  /** Its approvers' roles, when not the caller. */
  approvers?: readonly string[];
  reason: string;
  /** The rule's selectors (server, name, uri globs), tested before CASL sees the rule. */
  selectors?: Record<string, Glob>;
}

/** A decision for one principal's roles, action and item: constant, or CASL over the few rules left. */
type Narrowed = { constant: PolicyDecision } | { ability: Casl.Ability<Casl.AbilityTuple, ArgConditions> };

/** Bound on remembered narrowings (roles x action x item); cleared whole when reached. */
const MAX_NARROWED = 20_000;
/** Longer names and URIs are narrowed on every decision: names stay within 64 characters, and URIs a host lists are short. */
const MAX_REMEMBERED_ITEM_CHARS = 2048;

/** The actions whose requests carry arguments (tools/call, prompts/get): the only ones a `when:` is judged on. */
const ARGUMENT_ACTIONS = new Set(['call', 'get']);

/**
 * CASL is needed only for rules with argument conditions; loaded (synchronously, through its
 * CommonJS build) the first time one is met, it costs an idle daemon nothing otherwise.
 */
let casl: typeof Casl | undefined;
const loadCasl = (): typeof Casl => (casl ??= createRequire(import.meta.url)('@casl/ability') as typeof Casl);

/**
 * CASL's conditions matcher for our rules: the compiled `when:` judges the arguments. Not
 * CASL's MongoDB matcher, under which an array passes a test when one element does.
 */
const matchArgConditions = (conditions: ArgConditions) => ((subject: { args?: unknown }) => conditions.matches(subject.args)) as Casl.MatchConditions;

/** Actions whose permission also shows the item in lists, so seeing and using never disagree. */
const SHOWN_BY: Readonly<Record<string, readonly SubjectType[]>> = {
  call: ['Tool'],
  get: ['Prompt'],
  read: ['Resource'],
  complete: ['Prompt', 'Resource'],
};
const LISTED_KINDS: readonly SubjectType[] = ['Tool', 'Prompt', 'Resource'];

/**
 * A policy document compiled to CASL rules. Precedence, lowest first: the default effect,
 * then every allow, then every deny; so a deny always wins over an allow, and any rule over
 * the default. What is built is kept until the policy changes (a new CompiledPolicy).
 */
export class CompiledPolicy {
  private readonly allowRules: Map<string, RawRule[]>;
  private readonly confirmRules: Map<string, RawRule[]>;
  private readonly denyRules: Map<string, RawRule[]>;
  private readonly ruleLists = new Map<string, RawRule[]>();
  private readonly narrowed = new Map<string, Narrowed>();
  private readonly principalRoles = new Map<string, string[]>();
  /** `users:` by the caller each entry means (`key:alice` is `alice`), folded as callerKey folds. */
  private readonly userRoles = new Map<string, readonly string[]>();
  /**
   * `groups:` as a Map: a token's groups are the issuer's text, and looked up in the
   * document's plain object a group named `constructor` or `__proto__` found Object's own.
   */
  private readonly groupRoles: ReadonlyMap<string, readonly string[]>;

  constructor(
    private readonly doc: PolicyDocument,
    readonly defaultEffect: 'allow' | 'deny',
  ) {
    // The loader refuses entries that are no caller name, and two that name one caller
    // (`jwt:Erin` and `jwt:erin` included).
    for (const [user, roles] of Object.entries(doc.users)) this.userRoles.set(foldCallerName(canonicalCallerName(user) ?? user), roles);
    this.groupRoles = new Map(Object.entries(doc.groups));
    this.allowRules = new Map();
    this.confirmRules = new Map();
    this.denyRules = new Map();
    for (const [role, rules] of Object.entries(doc.roles)) {
      const allow: RawRule[] = [];
      const confirm: RawRule[] = [];
      const deny: RawRule[] = [];
      rules.forEach((rule, index) => {
        for (const raw of rawRules(rule, rule.id ?? `${role}#${index + 1}`)) (raw.inverted ? deny : raw.confirm ? confirm : allow).push(raw);
      });
      this.allowRules.set(role, allow);
      this.confirmRules.set(role, confirm);
      this.denyRules.set(role, deny);
    }
  }

  /** For tests: how many narrowings are remembered. */
  get rememberedNarrowings(): number {
    return this.narrowed.size;
  }

  /** The principal's roles: its own (key or token), its user entry, its groups', everyone's. */
  rolesOf(principal: PolicyPrincipal): string[] {
    const roles = new Set([...(principal.roles ?? []), ...(this.userRoles.get(callerKey(principal)) ?? []), ...this.doc.everyone]);
    for (const group of principal.groups ?? []) for (const role of this.groupRoles.get(group) ?? []) roles.add(role);
    return [...roles].filter((role) => this.allowRules.has(role)).sort();
  }

  /**
   * Measured with 200 rules, asking CASL directly cost ~30 µs a call: it tests the
   * conditions of every rule for the action, in precedence order, each time. So the rules
   * are first narrowed to those whose action, subject and globs match this item, once per
   * (roles, action, item): when none of those has argument conditions the decision is a
   * constant; otherwise CASL decides over the few rules left.
   */
  decide(principal: PolicyPrincipal, action: string, type: SubjectType, fields: SubjectFields): PolicyDecision {
    const roles = this.rolesKey(principal);
    const item = fields.name ?? fields.uri ?? '';
    const key = `${roles}\0${action}\0${type}\0${fields.server}\0${item}`;
    let narrowed = this.narrowed.get(key);
    if (!narrowed) {
      narrowed = this.narrow(this.rulesFor(roles), action, type, fields);
      // A host chooses the URI of a read (up to the body limit): kept, 20,000 of them held gigabytes.
      if (item.length <= MAX_REMEMBERED_ITEM_CHARS) {
        if (this.narrowed.size >= MAX_NARROWED) this.narrowed.clear();
        this.narrowed.set(key, narrowed);
      }
    }
    if ('constant' in narrowed) return narrowed.constant;
    const rule = narrowed.ability.relevantRuleFor(action, loadCasl().subject(type, { args: fields.args }));
    if (!rule) return { allowed: false, rule: 'policy:default-deny' };
    return decisionOf(rule.origin as RawRule);
  }

  /** The rules whose action, subject type and selectors match, lowest precedence first, as CASL rules on the arguments only. */
  private narrow(rules: readonly RawRule[], action: string, type: SubjectType, fields: SubjectFields): Narrowed {
    const values: Record<string, string | undefined> = { server: fields.server, name: fields.name, uri: fields.uri };
    const kept: RawRule[] = [];
    for (const rule of rules) {
      const actions = [rule.action].flat();
      if (!actions.includes(action) && !actions.includes('manage')) continue;
      const subjects = [rule.subject].flat();
      if (!subjects.includes(type) && !subjects.includes('all')) continue;
      const selectors = Object.entries(rule.selectors ?? {});
      if (!selectors.every(([field, pattern]) => values[field] !== undefined && pattern.test(values[field]!))) continue;
      let conditions = rule.conditions;
      // Only call and get have arguments to judge a `when:` on; on any other action they would
      // all be missing, and a `notIn` deny would refuse every read, completion or log line.
      // A list: as for the list rule a use implies (rawRules), a rule that names `list` itself
      // (`[list, call]`, `*`) shows the item whatever its conditions when it allows, and when
      // it denies with conditions leaves the item listed. Any other action: the rule does not
      // apply to it (a narrower allow, and a deny meant for some arguments only).
      if (conditions !== undefined && !ARGUMENT_ACTIONS.has(action)) {
        if (rule.inverted || action !== 'list') continue;
        conditions = undefined;
      }
      kept.push({ action: rule.action, subject: rule.subject, inverted: rule.inverted, confirm: rule.confirm, approvers: rule.approvers, reason: rule.reason, conditions });
    }
    if (kept.every((rule) => rule.conditions === undefined)) {
      // The strongest rule wins: the last one kept (denies come after allows).
      const last = kept.at(-1);
      return { constant: last ? decisionOf(last) : { allowed: false, rule: 'policy:default-deny' } };
    }
    return { ability: new (loadCasl().Ability)(kept as never, { conditionsMatcher: matchArgConditions }) };
  }

  private rolesKey(principal: PolicyPrincipal): string {
    // Control characters apart, not commas: a token's group may hold one (an LDAP DN), and
    // ['eng,ops'] is not ['eng', 'ops']. A caller name has none; claims would need the issuer's.
    const who = `${callerKey(principal)}\0${(principal.roles ?? []).join('\x01')}\0${(principal.groups ?? []).join('\x01')}`;
    let roles = this.principalRoles.get(who);
    if (!roles) {
      if (this.principalRoles.size >= MAX_NARROWED) this.principalRoles.clear();
      roles = this.rolesOf(principal);
      this.principalRoles.set(who, roles);
    }
    return roles.join('\n');
  }

  /**
   * Every rule of these roles, lowest precedence first: the default, the allows, the confirms
   * the caller answers, the confirms someone else answers (`approvers`), the denies. So a
   * sign-off by someone else is never undone by a confirm of the caller's own that also
   * matches, whichever role or place in the file either comes from.
   */
  private rulesFor(rolesKey: string): RawRule[] {
    let rules = this.ruleLists.get(rolesKey);
    if (!rules) {
      const roles = rolesKey === '' ? [] : rolesKey.split('\n');
      rules = [];
      if (this.defaultEffect === 'allow') rules.push({ action: 'manage', subject: 'all', reason: 'policy:default-allow' });
      for (const role of roles) rules.push(...this.allowRules.get(role)!);
      for (const role of roles) rules.push(...this.confirmRules.get(role)!.filter((rule) => !rule.approvers));
      for (const role of roles) rules.push(...this.confirmRules.get(role)!.filter((rule) => rule.approvers));
      for (const role of roles) rules.push(...this.denyRules.get(role)!);
      this.ruleLists.set(rolesKey, rules);
    }
    return rules;
  }
}

function decisionOf(rule: RawRule): PolicyDecision {
  if (rule.inverted) return { allowed: false, rule: rule.reason };
  if (!rule.confirm) return { allowed: true, rule: rule.reason };
  return rule.approvers ? { allowed: true, confirm: true, approvers: rule.approvers, rule: rule.reason } : { allowed: true, confirm: true, rule: rule.reason };
}

/** One document rule as CASL rules: itself, and the list rule its action implies. */
function rawRules(rule: PolicyRule, reason: string): RawRule[] {
  const inverted = rule.deny !== undefined;
  const confirm = rule.confirm !== undefined;
  const actions = [rule.allow ?? rule.deny ?? rule.confirm!].flat().map((a) => (a === '*' ? 'manage' : a));
  const subject: string | string[] =
    rule.tool !== undefined
      ? 'Tool'
      : rule.prompt !== undefined
        ? 'Prompt'
        : rule.resource !== undefined
          ? 'Resource'
          : rule.server !== undefined
            ? ['Tool', 'Prompt', 'Resource', 'Server']
            : 'all';
  const selectors: Record<string, Glob> = {};
  if (rule.server !== undefined) selectors.server = compileGlob(rule.server, 'name');
  const nameGlob = rule.tool ?? rule.prompt;
  if (nameGlob !== undefined) selectors.name = compileGlob(nameGlob, 'name');
  if (rule.resource !== undefined) selectors.uri = compileGlob(rule.resource, 'uri');
  const conditions = compileArgConditions(rule.when, inverted ? 'deny' : confirm ? 'confirm' : 'allow');
  const out: RawRule[] = [{ action: actions, subject, reason, inverted, confirm, ...(rule.approvers && { approvers: rule.approvers }), selectors, conditions }];
  // Only the kinds each action applies to: `allow: call, server: X` shows X's tools, not
  // its prompts and resources, which the rule does not let anyone use.
  const usable = new Set(actions.flatMap((a) => (Object.hasOwn(SHOWN_BY, a) ? SHOWN_BY[a] : [])));
  const listed = (subject === 'all' ? LISTED_KINDS : [subject].flat()).filter((kind) => usable.has(kind as SubjectType));
  // An allowed use shows the item whatever its arguments; a denied use hides it only when
  // it is denied for every argument (an argument condition leaves it listed).
  if (listed.length > 0 && !actions.includes('list') && (!inverted || rule.when === undefined)) {
    out.push({ action: 'list', subject: listed, reason, inverted, selectors });
  }
  return out;
}
