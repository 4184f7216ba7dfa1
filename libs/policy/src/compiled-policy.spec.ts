import { describe, expect, it } from 'vitest';
import { CompiledPolicy, type PolicyPrincipal, type SubjectFields, type SubjectType } from './compiled-policy.js';
import { policyDocumentSchema } from './policy-document.js';

const policy = new CompiledPolicy(
  policyDocumentSchema.parse({
    roles: {
      admin: [{ id: 'admin-all', allow: '*' }],
      dev: [
        { id: 'gh-tools', allow: 'call', tool: 'github__*' },
        { id: 'no-delete', deny: 'call', tool: 'github__delete_*' },
        { id: 'issues-in-our-repos', allow: 'call', tool: 'jira__create_issue', when: { 'args.project': { in: ['OPS', 'DEV'] } } },
        { id: 'read-shared', allow: 'call', tool: 'fs__read_file', when: { 'args.path': { startsWith: '/srv/shared/' } } },
        { id: 'no-prod-writes', deny: 'call', server: 'fs', when: { 'args.path': { startsWith: '/srv/shared/prod/' } } },
        { id: 'docs', allow: 'read', resource: 'file:///docs/**' },
        { id: 'prompts', allow: 'get', prompt: '*' },
      ],
      reader: [{ id: 'read-all-resources', allow: ['list', 'read'], resource: '**' }],
      nobody: [{ id: 'hide-secret', deny: ['list', 'call'], tool: 'vault__*' }],
    },
    users: { alice: ['admin'], 'ci-bot': ['dev'] },
    groups: { eng: ['dev'] },
    everyone: ['nobody'],
  }),
  'deny',
);

const tool = (name: string, args: unknown = {}): [SubjectType, SubjectFields] => ['Tool', { server: name.split('__')[0], name, args }];
const resource = (uri: string, server = 'files'): [SubjectType, SubjectFields] => ['Resource', { server, uri }];

type Case = [string, PolicyPrincipal, string, [SubjectType, SubjectFields], boolean, string];

const bob: PolicyPrincipal = { id: 'bob', groups: ['eng'] };
const carol: PolicyPrincipal = { id: 'carol', roles: ['reader'] };
const cases: Case[] = [
  ['admin may do anything', { id: 'alice' }, 'call', tool('github__delete_repo'), true, 'admin-all'],
  ['everyone-deny beats admin allow', { id: 'alice' }, 'call', tool('vault__read'), false, 'hide-secret'],
  ['role via group', bob, 'call', tool('github__create_issue'), true, 'gh-tools'],
  ['deny glob beats allow glob', bob, 'call', tool('github__delete_repo'), false, 'no-delete'],
  ['glob is anchored', bob, 'call', tool('my_github__x'), false, 'policy:default-deny'],
  ['argument in list', bob, 'call', tool('jira__create_issue', { project: 'OPS' }), true, 'issues-in-our-repos'],
  ['argument not in list', bob, 'call', tool('jira__create_issue', { project: 'HR' }), false, 'policy:default-deny'],
  ['argument missing', bob, 'call', tool('jira__create_issue', {}), false, 'policy:default-deny'],
  ['prefix condition', bob, 'call', tool('fs__read_file', { path: '/srv/shared/a.txt' }), true, 'read-shared'],
  ['prefix is literal, not a glob', bob, 'call', tool('fs__read_file', { path: '/srv/sharedX/a' }), false, 'policy:default-deny'],
  ['conditional deny on a server beats the allow', bob, 'call', tool('fs__read_file', { path: '/srv/shared/prod/k' }), false, 'no-prod-writes'],
  ['user entry gives a role', { id: 'ci-bot' }, 'call', tool('github__list_prs'), true, 'gh-tools'],
  ['unknown principal: default', { id: 'zed' }, 'call', tool('github__list_prs'), false, 'policy:default-deny'],
  ['** crosses /', bob, 'read', resource('file:///docs/a/b/c.md'), true, 'docs'],
  ['resource outside the glob', bob, 'read', resource('file:///etc/passwd'), false, 'policy:default-deny'],
  ['a role from the key', carol, 'read', resource('file:///etc/hosts'), true, 'read-all-resources'],
  ['an action the rule does not name', carol, 'subscribe', resource('file:///etc/hosts'), false, 'policy:default-deny'],
  ['an allowed call lists the tool', bob, 'list', tool('github__create_issue'), true, 'gh-tools'],
  ['a call allowed for some arguments lists the tool', bob, 'list', tool('jira__create_issue'), true, 'issues-in-our-repos'],
  ['a call denied outright hides the tool', bob, 'list', tool('github__delete_repo'), false, 'no-delete'],
  ['a call denied for some arguments keeps it listed', bob, 'list', tool('fs__read_file'), true, 'read-shared'],
  ['deny list hides', { id: 'alice' }, 'list', tool('vault__read'), false, 'hide-secret'],
  ['prompts by glob', bob, 'get', ['Prompt', { server: 'p', name: 'p__summarize', args: {} }], true, 'prompts'],
];

describe('CompiledPolicy decisions', () => {
  it.each(cases)('%s', (_what, principal, action, [type, fields], allowed, rule) => {
    expect(policy.decide(principal, action, type, fields)).toEqual({ allowed, rule });
  });

  it('default allow: no matching rule means allowed, and rules still deny', () => {
    const open = new CompiledPolicy(policyDocumentSchema.parse({ roles: { r: [{ deny: 'call', tool: 'x__*' }] }, everyone: ['r'] }), 'allow');
    expect(open.decide({ id: 'a' }, 'call', ...tool('y__z'))).toEqual({ allowed: true, rule: 'policy:default-allow' });
    expect(open.decide({ id: 'a' }, 'call', ...tool('x__z'))).toEqual({ allowed: false, rule: 'r#1' });
  });

  it('roles a principal claims that the policy does not define are ignored', () => {
    expect(policy.rolesOf({ id: 'q', roles: ['root', 'reader'], groups: ['eng', 'x'] })).toEqual(['dev', 'nobody', 'reader']);
  });
});

describe('confirm rules', () => {
  const confirming = new CompiledPolicy(
    policyDocumentSchema.parse({
      roles: {
        ops: [
          { id: 'fs', allow: 'call', server: 'fs' },
          { id: 'ask-deletes', confirm: 'call', tool: 'fs__delete*' },
          { id: 'ask-prod-writes', confirm: 'call', tool: 'fs__write', when: { 'args.path': { startsWith: '/prod/' } } },
          { id: 'never-root', deny: 'call', tool: 'fs__delete*', when: { 'args.path': { eq: '/' } } },
        ],
      },
      everyone: ['ops'],
    }),
    'deny',
  );
  const who = { id: 'a' };

  it('is stronger than allow and weaker than deny', () => {
    expect(confirming.decide(who, 'call', ...tool('fs__read'))).toEqual({ allowed: true, rule: 'fs' });
    expect(confirming.decide(who, 'call', ...tool('fs__delete', { path: '/tmp' }))).toEqual({ allowed: true, confirm: true, rule: 'ask-deletes' });
    expect(confirming.decide(who, 'call', ...tool('fs__delete', { path: '/' }))).toEqual({ allowed: false, rule: 'never-root' });
  });

  it('can depend on the arguments, and lists the tool like an allow', () => {
    expect(confirming.decide(who, 'call', ...tool('fs__write', { path: '/prod/x' }))).toEqual({ allowed: true, confirm: true, rule: 'ask-prod-writes' });
    expect(confirming.decide(who, 'call', ...tool('fs__write', { path: '/dev/x' }))).toEqual({ allowed: true, rule: 'fs' });
    expect(confirming.decide(who, 'list', ...tool('fs__delete'))).toEqual({ allowed: true, rule: 'ask-deletes' });
  });

  it('applies to tool calls only', () => {
    const problems = policyDocumentSchema.safeParse({ roles: { r: [{ confirm: 'read', resource: '**' }, { confirm: 'call', prompt: 'x' }] } });
    expect(problems.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'roles.r.0.confirm: confirm applies to tool calls: confirm: call',
      'roles.r.1: confirm applies to tools: select them with tool and/or server',
    ]);
  });
});
