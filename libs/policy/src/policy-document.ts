import { MAX_CALLER_NAME_CHARS } from '@switchboard/core';
import { z } from 'zod';
import { outsideSelector } from './rule-actions.js';

/** What a rule may allow or deny. `*` is every action. */
export const POLICY_ACTIONS = ['list', 'call', 'read', 'subscribe', 'get', 'complete', 'sample', 'elicit', 'log'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

const ACTION_ERROR = `must be one of ${[...POLICY_ACTIONS, '*'].join(', ')}, or a list of them`;
const action = z.enum([...POLICY_ACTIONS, '*'], { error: ACTION_ERROR });
const actions = z.union([action, z.array(action).min(1)], { error: ACTION_ERROR });
const name = z.string().min(1).max(200);
/** A `users:` entry names a caller: as long as any caller's name can be (a token user's, jwt:NAME, included). */
const callerName = z.string().min(1).max(MAX_CALLER_NAME_CHARS);

/**
 * What eq, in and notIn compare an argument with. A null (`eq: ~`), `.inf` or a list is none,
 * and zod alone would only say "Invalid input".
 */
const scalar = z.union([z.string(), z.number(), z.boolean()], { error: 'must be a string, a finite number or a boolean (true or false)' });
/** An empty `in:` matches nothing and an empty `notIn:` everything: zod would say "Too small: expected array to have >=1 items". */
const scalars = z.array(scalar).min(1, { error: 'must list at least one value' });

/**
 * A test on one argument: `args.repo: { in: [a, b] }`. Each judges the argument's value as a
 * whole (an array never passes for one of its elements); arg-conditions.ts says what a value
 * of another type does.
 */
const condition = z
  .strictObject({
    eq: scalar.optional(),
    in: scalars.optional(),
    notIn: scalars.optional(),
    startsWith: z.string().optional().describe('A literal string prefix; for paths, pathWithin.'),
    pathWithin: z
      .string()
      .refine((p) => p.startsWith('/') && !p.includes('\0') && !p.includes('\\'), {
        message: 'pathWithin takes an absolute POSIX path, e.g. /srv/shared/ (no backslash or NUL)',
      })
      .optional()
      .describe('The value is an absolute path that, normalised (//, ., ..), is this directory or under it.'),
  })
  .refine((c) => Object.values(c).filter((v) => v !== undefined).length === 1, {
    message: 'give exactly one of eq, in, notIn, startsWith, pathWithin',
  });

export const ruleSchema = z
  .strictObject({
    id: name.optional().describe('Names the rule in audit rows and `policy check`; default <role>#<n>.'),
    allow: actions.optional(),
    deny: actions.optional(),
    confirm: z
      .literal('call', { error: 'confirm applies to tool calls: confirm: call' })
      .optional()
      .describe('Allow the call only once a human approves it (docs/approvals.md). Stronger than allow, weaker than deny.'),
    approvers: z
      .array(name)
      .min(1, { message: 'list at least one role, or leave approvers out (the caller then confirms its own calls)' })
      .optional()
      .describe('confirm rules: roles whose members approve, in the inbox; never the caller itself. Without it the caller confirms its own call.'),
    tool: name.optional().describe('Public tool name glob, e.g. github__*'),
    prompt: name.optional().describe('Public prompt name glob'),
    resource: name.optional().describe('Public resource URI glob; ** crosses /'),
    server: name.optional().describe('Upstream name glob'),
    when: z
      .record(z.string().regex(/^args\.[A-Za-z0-9_.-]+$/, { message: 'conditions name an argument: args.<name>' }), condition)
      .optional()
      .describe('Conditions on the arguments of a tools/call or prompts/get.'),
  })
  .refine((r) => [r.allow, r.deny, r.confirm].filter((v) => v !== undefined).length === 1, {
    message: 'a rule has exactly one of allow, deny or confirm',
  })
  .refine((r) => r.approvers === undefined || r.confirm !== undefined, { message: 'approvers name who approves a confirm rule\'s calls: this rule has no confirm', path: ['approvers'] })
  .refine((r) => r.confirm === undefined || (r.prompt === undefined && r.resource === undefined), {
    message: 'confirm applies to tools: select them with tool and/or server',
  })
  .refine((r) => [r.tool, r.prompt, r.resource].filter((v) => v !== undefined).length <= 1, {
    message: 'a rule selects at most one of tool, prompt, resource',
  })
  .refine((r) => r.when === undefined || r.resource === undefined, { message: 'resources have no arguments: when applies to tools and prompts' })
  .refine((r) => r.when === undefined || judgesArguments(r.allow ?? r.deny ?? r.confirm!), {
    message: 'when judges the arguments of call (tools) and get (prompts): this rule names neither, so it would never apply',
  })
  .superRefine((r, ctx) => {
    // `allow: call, resource: ...` allows nothing: refused as a rule that can never apply. A
    // rule with some action that applies loads, and the rest is a warning (actionsOutsideSelectors).
    const outside = outsideSelector(r);
    if (outside && outside.applying.length === 0) ctx.addIssue({ code: 'custom', message: outside.why('the rule would never apply') });
  });

/** Whether a rule's actions include one whose requests carry arguments. */
function judgesArguments(actions: string | string[]): boolean {
  return [actions].flat().some((a) => a === 'call' || a === 'get' || a === '*');
}

export const policyDocumentSchema = z.strictObject(
  {
    defaultEffect: z.enum(['allow', 'deny']).optional().describe('Without a matching rule; overrides policy.defaultEffect in the config.'),
    roles: z.record(name, z.array(ruleSchema)).describe('Rules by role.'),
    users: z.record(callerName, z.array(name)).default({}).describe('Principal -> roles.'),
    groups: z.record(name, z.array(name)).default({}).describe('Group (from a token) -> roles.'),
    everyone: z.array(name).default([]).describe('Roles every principal has.'),
  },
  // Only for what is no mapping at all: an unknown key in one is named by the loader.
  { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'must be a mapping with roles (and optionally users, groups, everyone, defaultEffect)') },
);

export type PolicyRule = z.output<typeof ruleSchema>;
export type PolicyDocument = z.output<typeof policyDocumentSchema>;
