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

const bob: PolicyPrincipal = { id: 'bob', authMethod: 'api-key', groups: ['eng'] };
const carol: PolicyPrincipal = { id: 'carol', authMethod: 'api-key', roles: ['reader'] };
const cases: Case[] = [
  ['admin may do anything', { id: 'alice', authMethod: 'api-key' }, 'call', tool('github__delete_repo'), true, 'admin-all'],
  ['everyone-deny beats admin allow', { id: 'alice', authMethod: 'api-key' }, 'call', tool('vault__read'), false, 'hide-secret'],
  ['role via group', bob, 'call', tool('github__create_issue'), true, 'gh-tools'],
  ['deny glob beats allow glob', bob, 'call', tool('github__delete_repo'), false, 'no-delete'],
  ['glob is anchored', bob, 'call', tool('my_github__x'), false, 'policy:default-deny'],
  // A name has no segments: a '/' an upstream put in its tool name does not stop a name glob.
  ['a name glob spans a / in the name', bob, 'call', tool('github__delete_/repo'), false, 'no-delete'],
  ['a deny name glob spans it too, whatever allows', { id: 'alice', authMethod: 'api-key' }, 'call', tool('vault__a/b'), false, 'hide-secret'],
  ['argument in list', bob, 'call', tool('jira__create_issue', { project: 'OPS' }), true, 'issues-in-our-repos'],
  ['argument not in list', bob, 'call', tool('jira__create_issue', { project: 'HR' }), false, 'policy:default-deny'],
  ['argument missing', bob, 'call', tool('jira__create_issue', {}), false, 'policy:default-deny'],
  ['prefix condition', bob, 'call', tool('fs__read_file', { path: '/srv/shared/a.txt' }), true, 'read-shared'],
  ['prefix is literal, not a glob', bob, 'call', tool('fs__read_file', { path: '/srv/sharedX/a' }), false, 'policy:default-deny'],
  ['conditional deny on a server beats the allow', bob, 'call', tool('fs__read_file', { path: '/srv/shared/prod/k' }), false, 'no-prod-writes'],
  ['user entry gives a role', { id: 'ci-bot', authMethod: 'api-key' }, 'call', tool('github__list_prs'), true, 'gh-tools'],
  ['unknown principal: default', { id: 'zed', authMethod: 'api-key' }, 'call', tool('github__list_prs'), false, 'policy:default-deny'],
  ['** crosses /', bob, 'read', resource('file:///docs/a/b/c.md'), true, 'docs'],
  ['resource outside the glob', bob, 'read', resource('file:///etc/passwd'), false, 'policy:default-deny'],
  ['a role from the key', carol, 'read', resource('file:///etc/hosts'), true, 'read-all-resources'],
  ['an action the rule does not name', carol, 'subscribe', resource('file:///etc/hosts'), false, 'policy:default-deny'],
  ['an allowed call lists the tool', bob, 'list', tool('github__create_issue'), true, 'gh-tools'],
  ['a call allowed for some arguments lists the tool', bob, 'list', tool('jira__create_issue'), true, 'issues-in-our-repos'],
  ['a call denied outright hides the tool', bob, 'list', tool('github__delete_repo'), false, 'no-delete'],
  ['a call denied for some arguments keeps it listed', bob, 'list', tool('fs__read_file'), true, 'read-shared'],
  ['deny list hides', { id: 'alice', authMethod: 'api-key' }, 'list', tool('vault__read'), false, 'hide-secret'],
  ['prompts by glob', bob, 'get', ['Prompt', { server: 'p', name: 'p__summarize', args: {} }], true, 'prompts'],
];

describe('CompiledPolicy decisions', () => {
  it.each(cases)('%s', (_what, principal, action, [type, fields], allowed, rule) => {
    expect(policy.decide(principal, action, type, fields)).toEqual({ allowed, rule });
  });

  it('default allow: no matching rule means allowed, and rules still deny', () => {
    const open = new CompiledPolicy(policyDocumentSchema.parse({ roles: { r: [{ deny: 'call', tool: 'x__*' }] }, everyone: ['r'] }), 'allow');
    expect(open.decide({ id: 'a', authMethod: 'api-key' }, 'call', ...tool('y__z'))).toEqual({ allowed: true, rule: 'policy:default-allow' });
    expect(open.decide({ id: 'a', authMethod: 'api-key' }, 'call', ...tool('x__z'))).toEqual({ allowed: false, rule: 'r#1' });
  });

  it("users: names a caller as callerName writes it: a token with a key's name is not that key", () => {
    const doc = policyDocumentSchema.parse({ roles: { dev: [{ allow: 'call', server: 'gh' }] }, users: { alice: ['dev'], 'jwt:erin': ['dev'] } });
    const byName = new CompiledPolicy(doc, 'deny');
    const call = (id: string, authMethod: string) => byName.decide({ id, authMethod }, 'call', ...tool('gh__search')).allowed;
    expect(call('alice', 'api-key')).toBe(true);
    // Asked second, so a decision cached for the key (same name, roles, groups) would answer it.
    expect(call('alice', 'jwt')).toBe(false);
    expect(call('erin', 'jwt')).toBe(true);
    expect(call('erin', 'api-key')).toBe(false);
  });

  it("a token's group named like an Object property (constructor, __proto__, toString) is a group the policy does not name", () => {
    // A groups claim is the issuer's text; it once threw here (Object's own `constructor` is
    // no list of roles), and every request of such a token answered -32603.
    const groups = ['constructor', '__proto__', 'toString', 'eng', 'hasOwnProperty'];
    const erin: PolicyPrincipal = { id: 'erin', authMethod: 'jwt', groups };
    expect(policy.rolesOf(erin)).toEqual(['dev', 'nobody']);
    expect(policy.decide(erin, 'call', ...tool('github__create_issue'))).toEqual({ allowed: true, rule: 'gh-tools' });
    expect(policy.decide({ id: 'erin', authMethod: 'jwt', groups: ['__proto__'] }, 'call', ...tool('github__create_issue'))).toEqual({
      allowed: false,
      rule: 'policy:default-deny',
    });
  });

  it('remembers no narrowing for a long URI: a host chooses it, and each would be kept (up to 20,000 of them)', () => {
    const fresh = new CompiledPolicy(policyDocumentSchema.parse({ roles: { r: [{ id: 'docs', allow: 'read', resource: 'file:///docs/**' }] }, everyone: ['r'] }), 'deny');
    const anyone = { id: 'anonymous', authMethod: 'loopback' };
    const long = (i: number) => `file:///docs/${i}/${'x'.repeat(100_000)}`;
    for (let i = 0; i < 50; i++) expect(fresh.decide(anyone, 'read', ...resource(long(i)))).toEqual({ allowed: true, rule: 'docs' });
    expect(fresh.decide(anyone, 'read', ...resource('file:///etc/passwd'))).toEqual({ allowed: false, rule: 'policy:default-deny' });
    expect(fresh.rememberedNarrowings).toBe(1);
  });

  it("a token's one group with a comma in its name (an LDAP DN) is not taken for two groups by the remembered roles", () => {
    const dn = new CompiledPolicy(
      policyDocumentSchema.parse({ roles: { dev: [{ id: 'gh', allow: 'call', server: 'gh' }] }, groups: { eng: ['dev'], ops: ['dev'] } }),
      'deny',
    );
    const call = (groups: string[]) => dn.decide({ id: 'q', authMethod: 'jwt', groups }, 'call', ...tool('gh__search')).allowed;
    expect(call(['eng', 'ops'])).toBe(true);
    // Asked second: remembered under the same key, it was given eng's and ops' roles.
    expect(call(['eng,ops'])).toBe(false);
    const byRoles = (roles: string[]) => dn.decide({ id: 'q', authMethod: 'jwt', roles }, 'call', ...tool('gh__search')).allowed;
    expect(byRoles(['dev', 'x'])).toBe(true);
    expect(byRoles(['dev,x'])).toBe(false);
  });

  it('roles a principal claims that the policy does not define are ignored', () => {
    expect(policy.rolesOf({ id: 'q', authMethod: 'api-key', roles: ['root', 'reader'], groups: ['eng', 'x'] })).toEqual(['dev', 'nobody', 'reader']);
  });
});

describe('what a server-wide rule shows in lists', () => {
  const doc = policyDocumentSchema.parse({
    roles: {
      caller: [{ id: 'call-x', allow: 'call', server: 'x' }],
      reader: [{ id: 'use-y', allow: ['call', 'get'], server: 'y' }],
      hidden: [
        { id: 'all-z', allow: '*', server: 'z' },
        { id: 'no-z-calls', deny: 'call', server: 'z' },
      ],
    },
  });
  const policy = new CompiledPolicy(doc, 'deny');
  const listed = (roles: string[], type: SubjectType, fields: SubjectFields) => policy.decide({ id: 'p', authMethod: 'api-key', roles }, 'list', type, fields).allowed;

  it('only the kinds its actions apply to: call shows tools, get prompts, read resources', () => {
    expect(listed(['caller'], 'Tool', { server: 'x', name: 'x__t' })).toBe(true);
    expect(listed(['caller'], 'Prompt', { server: 'x', name: 'x__p' })).toBe(false);
    expect(listed(['caller'], 'Resource', { server: 'x', uri: 'x://r' })).toBe(false);
    expect(listed(['reader'], 'Prompt', { server: 'y', name: 'y__p' })).toBe(true);
    expect(listed(['reader'], 'Resource', { server: 'y', uri: 'y://r' })).toBe(false);
  });

  it("a server-wide deny of calls hides the server's tools, not its prompts", () => {
    expect(listed(['hidden'], 'Tool', { server: 'z', name: 'z__t' })).toBe(false);
    expect(listed(['hidden'], 'Prompt', { server: 'z', name: 'z__p' })).toBe(true);
  });
});

describe('a when: is not judged on a list, which has no arguments', () => {
  const policy = new CompiledPolicy(
    policyDocumentSchema.parse({
      roles: {
        ops: [
          { id: 'jira-ops', allow: ['list', 'call'], tool: 'jira__create_issue', when: { 'args.project': { in: ['OPS'] } } },
          { id: 'gh-mine', allow: '*', tool: 'gh__*', when: { 'args.repo': { eq: 'mine' } } },
          { id: 'fs', allow: 'call', server: 'fs' },
          { id: 'fs-only-ok', deny: '*', tool: 'fs__*', when: { 'args.path': { notIn: ['/ok'] } } },
        ],
      },
      everyone: ['ops'],
    }),
    'deny',
  );
  const who = { id: 'a', authMethod: 'api-key' };

  it('an allow that names list itself, or *, lists the tool it lets one call', () => {
    expect(policy.decide(who, 'call', ...tool('jira__create_issue', { project: 'OPS' }))).toEqual({ allowed: true, rule: 'jira-ops' });
    expect(policy.decide(who, 'list', ...tool('jira__create_issue'))).toEqual({ allowed: true, rule: 'jira-ops' });
    expect(policy.decide(who, 'call', ...tool('gh__search', { repo: 'mine' }))).toEqual({ allowed: true, rule: 'gh-mine' });
    expect(policy.decide(who, 'list', ...tool('gh__search'))).toEqual({ allowed: true, rule: 'gh-mine' });
  });

  it('a deny of * with a when: leaves the tool listed, as one of call does', () => {
    expect(policy.decide(who, 'call', ...tool('fs__read', { path: '/ok' }))).toEqual({ allowed: true, rule: 'fs' });
    expect(policy.decide(who, 'call', ...tool('fs__read', { path: '/etc' }))).toEqual({ allowed: false, rule: 'fs-only-ok' });
    expect(policy.decide(who, 'list', ...tool('fs__read'))).toEqual({ allowed: true, rule: 'fs' });
  });
});

describe('a when: is not judged on actions without arguments (read, complete, log, ...)', () => {
  const policy = new CompiledPolicy(
    policyDocumentSchema.parse({
      roles: {
        base: [
          { id: 'all', allow: '*', server: 'fs' },
          { id: 'only-ro', deny: '*', server: 'fs', when: { 'args.mode': { notIn: ['ro'] } } },
          { id: 'docs-if', allow: '*', server: 'docs', when: { 'args.path': { pathWithin: '/docs/' } } },
        ],
      },
      everyone: ['base'],
    }),
    'deny',
  );
  const who = { id: 'a', authMethod: 'api-key' };

  it('a deny with a when: (notIn passes on a missing argument) still judges calls, and leaves reads, completions and log lines alone', () => {
    expect(policy.decide(who, 'call', ...tool('fs__write', {}))).toEqual({ allowed: false, rule: 'only-ro' });
    expect(policy.decide(who, 'call', ...tool('fs__write', { mode: 'ro' }))).toEqual({ allowed: true, rule: 'all' });
    expect(policy.decide(who, 'read', ...resource('file:///a', 'fs'))).toEqual({ allowed: true, rule: 'all' });
    expect(policy.decide(who, 'complete', 'Prompt', { server: 'fs', name: 'fs__p' })).toEqual({ allowed: true, rule: 'all' });
    expect(policy.decide(who, 'log', 'Server', { server: 'fs' })).toEqual({ allowed: true, rule: 'all' });
  });

  it('an allow with a when: grants no read or completion, which it cannot judge', () => {
    expect(policy.decide(who, 'call', ...tool('docs__open', { path: '/docs/a' }))).toEqual({ allowed: true, rule: 'docs-if' });
    expect(policy.decide(who, 'read', ...resource('file:///docs/a', 'docs'))).toEqual({ allowed: false, rule: 'policy:default-deny' });
    expect(policy.decide(who, 'complete', 'Prompt', { server: 'docs', name: 'docs__p' })).toEqual({ allowed: false, rule: 'policy:default-deny' });
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
  const who = { id: 'a', authMethod: 'api-key' };

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

  it("carries the deciding rule's approvers, with or without argument conditions", () => {
    const withApprovers = new CompiledPolicy(
      policyDocumentSchema.parse({
        roles: {
          ops: [
            { id: 'fs', allow: 'call', server: 'fs' },
            { id: 'lead-deploys', confirm: 'call', tool: 'fs__deploy', approvers: ['lead'] },
            { id: 'lead-prod-writes', confirm: 'call', tool: 'fs__write', when: { 'args.path': { startsWith: '/prod/' } }, approvers: ['lead', 'sre'] },
          ],
          lead: [],
          sre: [],
        },
        everyone: ['ops'],
      }),
      'deny',
    );
    expect(withApprovers.decide(who, 'call', ...tool('fs__deploy'))).toEqual({ allowed: true, confirm: true, approvers: ['lead'], rule: 'lead-deploys' });
    expect(withApprovers.decide(who, 'call', ...tool('fs__write', { path: '/prod/x' }))).toEqual({ allowed: true, confirm: true, approvers: ['lead', 'sre'], rule: 'lead-prod-writes' });
    expect(withApprovers.decide(who, 'call', ...tool('fs__write', { path: '/dev/x' }))).toEqual({ allowed: true, rule: 'fs' });
    expect(withApprovers.decide(who, 'list', ...tool('fs__deploy'))).toEqual({ allowed: true, rule: 'lead-deploys' });
  });

  it("a confirm with approvers beats a confirm of the caller's own that also matches, wherever either is written", () => {
    const lead = { id: 'lead-approves-deploys', confirm: 'call', tool: 'ci__deploy', approvers: ['lead'] };
    const own = { id: 'confirm-own-ci', confirm: 'call', tool: 'ci__*' };
    for (const doc of [
      { roles: { dev: [lead, own], lead: [] }, everyone: ['dev'] },
      { roles: { dev: [own, lead], lead: [] }, everyone: ['dev'] },
      { roles: { base: [lead], dev: [own], lead: [] }, everyone: ['base', 'dev'] },
      { roles: { base: [own], dev: [lead], lead: [] }, everyone: ['base', 'dev'] },
    ]) {
      const policy = new CompiledPolicy(policyDocumentSchema.parse(doc), 'deny');
      expect(policy.decide(who, 'call', ...tool('ci__deploy'))).toEqual({ allowed: true, confirm: true, approvers: ['lead'], rule: 'lead-approves-deploys' });
      expect(policy.decide(who, 'call', ...tool('ci__status'))).toEqual({ allowed: true, confirm: true, rule: 'confirm-own-ci' });
    }
  });

  it('applies to tool calls only', () => {
    const problems = policyDocumentSchema.safeParse({ roles: { r: [{ confirm: 'read', resource: '**' }, { confirm: 'call', prompt: 'x' }] } });
    expect(problems.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'roles.r.0.confirm: confirm applies to tool calls: confirm: call',
      'roles.r.1: confirm applies to tools: select them with tool and/or server',
    ]);
  });
});

/**
 * `when:` tests judge an argument's value as a whole. Under CASL's MongoDB matcher an array
 * passed a test when one of its elements did (and `notIn` when none was listed), so a
 * caller could send an array where the policy expected a scalar and get it to the upstream.
 */
describe('argument conditions: arrays, objects and other types cannot slip past a rule', () => {
  const decide = (p: CompiledPolicy, name: string, args: unknown) => p.decide({ id: 'a', authMethod: 'api-key' }, 'call', ...tool(name, args));
  const allowed = (rule: string) => ({ allowed: true, rule });
  const denied = (rule: string) => ({ allowed: false, rule });
  const confirmed = (rule: string) => ({ allowed: true, confirm: true, rule });
  const DEFAULT_DENY = denied('policy:default-deny');

  describe('allow rules: a value the test cannot judge does not get the allow', () => {
    const p = new CompiledPolicy(
      policyDocumentSchema.parse({
        roles: {
          r: [
            { id: 'greetings', allow: 'call', tool: 'chat__say', when: { 'args.text': { in: ['hello', 'hi'] } } },
            { id: 'yes-only', allow: 'call', tool: 'chat__ack', when: { 'args.answer': { eq: 'yes' } } },
            { id: 'three', allow: 'call', tool: 'chat__count', when: { 'args.n': { eq: 3 } } },
            { id: 'europe', allow: 'call', tool: 'time__now', when: { 'args.timezone': { startsWith: 'Europe/' } } },
            { id: 'not-hr', allow: 'call', tool: 'hr__search', when: { 'args.dept': { notIn: ['HR'] } } },
            { id: 'staging', allow: 'call', tool: 'deploy__run', when: { 'args.target.env': { eq: 'staging' } } },
          ],
        },
        everyone: ['r'],
      }),
      'deny',
    );

    it.each<[string, string, unknown, object]>([
      ['in: a listed string', 'chat__say', { text: 'hello' }, allowed('greetings')],
      ['in: an array holding a listed string', 'chat__say', { text: ['hello', '; rm -rf /'] }, DEFAULT_DENY],
      ['in: an array of listed strings only', 'chat__say', { text: ['hello'] }, DEFAULT_DENY],
      ['in: an object', 'chat__say', { text: { $in: 'hello' } }, DEFAULT_DENY],
      ['in: null, as absent', 'chat__say', { text: null }, DEFAULT_DENY],
      ['eq: the value', 'chat__ack', { answer: 'yes' }, allowed('yes-only')],
      ['eq: an array holding the value', 'chat__ack', { answer: ['yes', 'no'] }, DEFAULT_DENY],
      ['eq: a one-element array', 'chat__ack', { answer: ['yes'] }, DEFAULT_DENY],
      ['eq: a number', 'chat__count', { n: 3 }, allowed('three')],
      ['eq: the number as a string', 'chat__count', { n: '3' }, DEFAULT_DENY],
      ['eq: the number in an array', 'chat__count', { n: [3] }, DEFAULT_DENY],
      ['startsWith: a string with the prefix', 'time__now', { timezone: 'Europe/Paris' }, allowed('europe')],
      ['startsWith: an array whose first string has the prefix', 'time__now', { timezone: ['Europe/Paris', 'America/New_York'] }, DEFAULT_DENY],
      ['startsWith: a number', 'time__now', { timezone: 1 }, DEFAULT_DENY],
      ['notIn: an unlisted string', 'hr__search', { dept: 'ENG' }, allowed('not-hr')],
      ['notIn: the listed string', 'hr__search', { dept: 'HR' }, DEFAULT_DENY],
      ['notIn: an array holding the listed string', 'hr__search', { dept: ['ENG', 'HR'] }, DEFAULT_DENY],
      ['notIn: an array of unlisted strings', 'hr__search', { dept: ['ENG'] }, DEFAULT_DENY],
      ['notIn: an object', 'hr__search', { dept: { name: 'HR' } }, DEFAULT_DENY],
      ['notIn: null, as absent', 'hr__search', { dept: null }, allowed('not-hr')],
      ['notIn: a missing argument passes notIn (as before)', 'hr__search', {}, allowed('not-hr')],
      ['a missing argument fails eq, in and startsWith', 'time__now', {}, DEFAULT_DENY],
      ['no arguments at all', 'chat__say', undefined, DEFAULT_DENY],
      ['arguments that are an array', 'chat__say', [{ text: 'hello' }], DEFAULT_DENY],
      ['a nested path through objects', 'deploy__run', { target: { env: 'staging' } }, allowed('staging')],
      ['a nested path through an array', 'deploy__run', { target: [{ env: 'staging' }] }, DEFAULT_DENY],
      ['a nested path through an array of several', 'deploy__run', { target: [{ env: 'staging' }, { env: 'prod' }] }, DEFAULT_DENY],
      ['a nested path ending at an array', 'deploy__run', { target: { env: ['staging', 'prod'] } }, DEFAULT_DENY],
      ['a nested path through a string', 'deploy__run', { target: 'staging' }, DEFAULT_DENY],
      ['a nested path through an inherited property', 'deploy__run', { target: Object.create({ env: 'staging' }) }, DEFAULT_DENY],
    ])('%s', (_what, name, args, decision) => {
      expect(decide(p, name, args)).toEqual(decision);
    });
  });

  describe('deny rules: a value the test cannot judge gets the deny (fail closed)', () => {
    const p = new CompiledPolicy(
      policyDocumentSchema.parse({
        roles: {
          r: [
            { id: 'servers', allow: 'call', server: '*' },
            { id: 'our-projects-only', deny: 'call', tool: 'jira__create_issue', when: { 'args.project': { notIn: ['OPS', 'DEV'] } } },
            { id: 'no-secret-project', deny: 'call', tool: 'jira__search', when: { 'args.project': { in: ['SECRET'] } } },
            { id: 'no-admin-mode', deny: 'call', tool: 'svc__run', when: { 'args.mode': { eq: 'admin' } } },
            { id: 'no-force', deny: 'call', tool: 'git__push', when: { 'args.force': { eq: true } } },
            { id: 'no-prod-prefix', deny: 'call', tool: 'fs__read', when: { 'args.path': { startsWith: '/srv/prod/' } } },
            { id: 'no-prod-nested', deny: 'call', tool: 'fs__copy', when: { 'args.to.path': { pathWithin: '/srv/prod' } } },
            {
              id: 'no-admin-writes',
              deny: 'call',
              tool: 'db__query',
              when: { 'args.mode': { eq: 'write' }, 'args.table': { startsWith: 'admin_' } },
            },
          ],
        },
        everyone: ['r'],
      }),
      'deny',
    );

    it.each<[string, string, unknown, object]>([
      ['notIn: a listed project', 'jira__create_issue', { project: 'OPS' }, allowed('servers')],
      ['notIn: an unlisted project', 'jira__create_issue', { project: 'HR' }, denied('our-projects-only')],
      ['notIn: an array holding a listed and an unlisted project', 'jira__create_issue', { project: ['OPS', 'HR'] }, denied('our-projects-only')],
      ['notIn: an array of listed projects', 'jira__create_issue', { project: ['OPS'] }, denied('our-projects-only')],
      ['notIn: an object', 'jira__create_issue', { project: { key: 'OPS' } }, denied('our-projects-only')],
      ['notIn: a missing argument gets the deny (as before)', 'jira__create_issue', {}, denied('our-projects-only')],
      ['in: an unlisted project', 'jira__search', { project: 'OPS' }, allowed('servers')],
      ['in: an array holding the listed project', 'jira__search', { project: ['OPS', 'SECRET'] }, denied('no-secret-project')],
      ['in: an array without the listed project', 'jira__search', { project: ['OPS'] }, denied('no-secret-project')],
      ['in: a missing argument', 'jira__search', {}, allowed('servers')],
      ['eq: the value', 'svc__run', { mode: 'admin' }, denied('no-admin-mode')],
      ['eq: another value', 'svc__run', { mode: 'user' }, allowed('servers')],
      ['eq: an array holding the value', 'svc__run', { mode: ['user', 'admin'] }, denied('no-admin-mode')],
      ['eq: an array without the value', 'svc__run', { mode: ['user'] }, denied('no-admin-mode')],
      ['eq: null, as absent', 'svc__run', { mode: null }, allowed('servers')],
      ['eq: a value of another type', 'svc__run', { mode: 1 }, denied('no-admin-mode')],
      ['eq true: false', 'git__push', { force: false }, allowed('servers')],
      ['eq true: "true" (a string an upstream may coerce)', 'git__push', { force: 'true' }, denied('no-force')],
      ['startsWith: a path under the prefix', 'fs__read', { path: '/srv/prod/db.key' }, denied('no-prod-prefix')],
      ['startsWith: another path', 'fs__read', { path: '/srv/dev/x' }, allowed('servers')],
      ['startsWith: an array of paths under the prefix', 'fs__read', { path: ['/srv/prod/db.key'] }, denied('no-prod-prefix')],
      ['startsWith: an array of other paths', 'fs__read', { path: ['/srv/dev/x'] }, denied('no-prod-prefix')],
      ['startsWith: a number', 'fs__read', { path: 42 }, denied('no-prod-prefix')],
      ['startsWith: a missing argument', 'fs__read', {}, allowed('servers')],
      ['a nested path: outside', 'fs__copy', { to: { path: '/srv/dev/x' } }, allowed('servers')],
      ['a nested path: inside', 'fs__copy', { to: { path: '/srv/prod/x' } }, denied('no-prod-nested')],
      ['a nested path through an array', 'fs__copy', { to: [{ path: '/srv/prod/x' }] }, denied('no-prod-nested')],
      ['a nested path through an array of other paths', 'fs__copy', { to: [{ path: '/srv/dev/x' }] }, denied('no-prod-nested')],
      ['a nested path through a string', 'fs__copy', { to: '/srv/prod/x' }, denied('no-prod-nested')],
      ['a nested path through null, as absent', 'fs__copy', { to: null }, allowed('servers')],
      ['a nested path whose object lacks the key', 'fs__copy', { to: {} }, allowed('servers')],
      ['arguments that are an array', 'svc__run', [{ mode: 'admin' }], denied('no-admin-mode')],
      ['two conditions, both hold', 'db__query', { mode: 'write', table: 'admin_users' }, denied('no-admin-writes')],
      ['two conditions, one unjudgeable and one holding', 'db__query', { mode: 'write', table: ['admin_users'] }, denied('no-admin-writes')],
      ['two conditions, one unjudgeable and one failing', 'db__query', { mode: 'read', table: ['admin_users'] }, allowed('servers')],
    ])('%s', (_what, name, args, decision) => {
      expect(decide(p, name, args)).toEqual(decision);
    });
  });

  describe('confirm rules: a value the test cannot judge gets the confirm', () => {
    const p = new CompiledPolicy(
      policyDocumentSchema.parse({
        roles: {
          r: [
            { id: 'fs', allow: 'call', server: 'fs' },
            { id: 'ask-prod-writes', confirm: 'call', tool: 'fs__write', when: { 'args.path': { startsWith: '/prod/' } } },
            { id: 'ask-big-deletes', confirm: 'call', tool: 'fs__delete', when: { 'args.recursive': { eq: true } } },
            { id: 'ask-outside-tmp', confirm: 'call', tool: 'fs__move', when: { 'args.dest.dir': { notIn: ['/tmp'] } } },
          ],
        },
        everyone: ['r'],
      }),
      'deny',
    );

    it.each<[string, string, unknown, object]>([
      ['startsWith: under the prefix', 'fs__write', { path: '/prod/x' }, confirmed('ask-prod-writes')],
      ['startsWith: elsewhere', 'fs__write', { path: '/dev/x' }, allowed('fs')],
      ['startsWith: an array under the prefix', 'fs__write', { path: ['/prod/x'] }, confirmed('ask-prod-writes')],
      ['startsWith: an array starting elsewhere', 'fs__write', { path: ['/dev/x', '/prod/x'] }, confirmed('ask-prod-writes')],
      ['eq: false', 'fs__delete', { recursive: false }, allowed('fs')],
      ['eq: an array holding the value', 'fs__delete', { recursive: [true] }, confirmed('ask-big-deletes')],
      ['eq: a string an upstream may coerce', 'fs__delete', { recursive: 'true' }, confirmed('ask-big-deletes')],
      ['eq: a missing argument', 'fs__delete', {}, allowed('fs')],
      ['notIn: the listed value', 'fs__move', { dest: { dir: '/tmp' } }, allowed('fs')],
      ['notIn: an array of the listed value', 'fs__move', { dest: { dir: ['/tmp'] } }, confirmed('ask-outside-tmp')],
      ['notIn: a nested path through an array', 'fs__move', { dest: [{ dir: '/tmp' }] }, confirmed('ask-outside-tmp')],
    ])('%s', (_what, name, args, decision) => {
      expect(decide(p, name, args)).toEqual(decision);
    });
  });

  describe('pathWithin: a directory, judged on the normalised path', () => {
    const p = new CompiledPolicy(
      policyDocumentSchema.parse({
        roles: {
          r: [
            { id: 'read-shared', allow: 'call', tool: 'fs__read_file', when: { 'args.path': { pathWithin: '/srv/shared/' } } },
            { id: 'read-shared-prefix', allow: 'call', tool: 'fs__read_prefix', when: { 'args.path': { startsWith: '/srv/shared/' } } },
            { id: 'write', allow: 'call', tool: 'fs__write_file' },
            { id: 'no-prod', deny: 'call', tool: 'fs__write_file', when: { 'args.path': { pathWithin: '/srv/prod/' } } },
          ],
        },
        everyone: ['r'],
      }),
      'deny',
    );

    it.each<[string, string, unknown, object]>([
      ['a file in the directory', 'fs__read_file', '/srv/shared/a.txt', allowed('read-shared')],
      ['the directory itself', 'fs__read_file', '/srv/shared', allowed('read-shared')],
      ['the directory with a slash', 'fs__read_file', '/srv/shared/', allowed('read-shared')],
      ['.. that stays inside', 'fs__read_file', '/srv/shared/a/../b.txt', allowed('read-shared')],
      ['.. that leaves it', 'fs__read_file', '/srv/shared/../../etc/passwd', DEFAULT_DENY],
      ['startsWith, being literal, is fooled by the same ..', 'fs__read_prefix', '/srv/shared/../../etc/passwd', allowed('read-shared-prefix')],
      ['.. that leaves and comes back', 'fs__read_file', '/srv/shared/../shared/a', allowed('read-shared')],
      ['.. above the root stays at the root', 'fs__read_file', '/../../srv/shared/a', allowed('read-shared')],
      ['a sibling that shares the prefix', 'fs__read_file', '/srv/sharedX/a', DEFAULT_DENY],
      ['the parent', 'fs__read_file', '/srv', DEFAULT_DENY],
      ['a relative path', 'fs__read_file', 'srv/shared/a', DEFAULT_DENY],
      ['a relative path with ./', 'fs__read_file', './a.txt', DEFAULT_DENY],
      ['a path with NUL', 'fs__read_file', '/srv/shared/a\0/../../../etc/passwd', DEFAULT_DENY],
      ['a path with backslashes', 'fs__read_file', '/srv/shared/..\\..\\etc\\passwd', DEFAULT_DENY],
      ['an array of paths inside', 'fs__read_file', ['/srv/shared/a'], DEFAULT_DENY],
      ['a number', 'fs__read_file', 7, DEFAULT_DENY],
      ['deny: a file in the directory', 'fs__write_file', '/srv/prod/db.key', denied('no-prod')],
      ['deny: a doubled leading slash', 'fs__write_file', '//srv/prod/db.key', denied('no-prod')],
      ['deny: doubled slashes inside', 'fs__write_file', '/srv//prod///db.key', denied('no-prod')],
      ['deny: a . segment', 'fs__write_file', '/srv/prod/./x', denied('no-prod')],
      ['deny: a .. that comes back in', 'fs__write_file', '/srv/dev/../prod/x', denied('no-prod')],
      ['deny: the directory itself', 'fs__write_file', '/srv/prod', denied('no-prod')],
      ['deny: a sibling that shares the prefix', 'fs__write_file', '/srv/production', allowed('write')],
      ['deny: a sibling under it', 'fs__write_file', '/srv/production/x', allowed('write')],
      ['deny: a relative path (the upstream resolves it, maybe into the directory)', 'fs__write_file', 'srv/prod/x', denied('no-prod')],
      ['deny: a path with NUL', 'fs__write_file', '/srv/prod/x\0', denied('no-prod')],
      ['deny: a path with backslashes', 'fs__write_file', '/srv/dev\\..\\prod\\x', denied('no-prod')],
      ['deny: an array of paths', 'fs__write_file', ['/srv/prod/x'], denied('no-prod')],
      ['deny: an array of paths outside', 'fs__write_file', ['/srv/dev/x'], denied('no-prod')],
      ['deny: an object', 'fs__write_file', { toString: '/srv/prod/x' }, denied('no-prod')],
    ])('%s', (_what, name, path, decision) => {
      expect(decide(p, name, { path })).toEqual(decision);
    });

    it('a missing path fails pathWithin: the allow does not apply, nor the deny', () => {
      expect(decide(p, 'fs__read_file', {})).toEqual(DEFAULT_DENY);
      expect(decide(p, 'fs__write_file', {})).toEqual(allowed('write'));
    });
  });

  describe('the policy file schema', () => {
    const issues = (when: unknown) =>
      policyDocumentSchema.safeParse({ roles: { r: [{ allow: 'call', tool: 't', when }] } }).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);

    it('accepts pathWithin with an absolute path', () => {
      expect(issues({ 'args.path': { pathWithin: '/srv/shared/' } })).toBeUndefined();
      expect(issues({ 'args.path': { pathWithin: '/' } })).toBeUndefined();
    });

    it('refuses a pathWithin that is relative or holds a backslash or NUL', () => {
      for (const dir of ['srv/shared', './x', '', 'C:\\srv', '/srv\\x', '/srv/\0']) {
        expect(issues({ 'args.path': { pathWithin: dir } })).toEqual([
          'roles.r.0.when.args.path.pathWithin: pathWithin takes an absolute POSIX path, e.g. /srv/shared/ (no backslash or NUL)',
        ]);
      }
    });

    it('refuses a when: on a rule that names no action with arguments (call, get)', () => {
      const message = 'roles.r.0: when judges the arguments of call (tools) and get (prompts): this rule names neither, so it would never apply';
      const when = { 'args.x': { eq: 1 } };
      expect(policyDocumentSchema.safeParse({ roles: { r: [{ allow: 'complete', server: 's', when }] } }).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([message]);
      expect(policyDocumentSchema.safeParse({ roles: { r: [{ deny: ['list', 'read'], server: 's', when }] } }).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([message]);
      for (const action of ['call', 'get', '*', ['list', 'call']]) expect(policyDocumentSchema.safeParse({ roles: { r: [{ allow: action, server: 's', when }] } }).success).toBe(true);
    });

    it('takes exactly one test, pathWithin included', () => {
      const message = 'roles.r.0.when.args.path: give exactly one of eq, in, notIn, startsWith, pathWithin';
      expect(issues({ 'args.path': { pathWithin: '/srv', startsWith: '/srv' } })).toEqual([message]);
      expect(issues({ 'args.path': {} })).toEqual([message]);
    });
  });
});

describe('users: by caller name', () => {
  it('key:NAME in users is the key NAME; jwt:NAME is the token user only', () => {
    const policy = new CompiledPolicy(
      { roles: { dev: [{ allow: 'call', tool: 'x' }], ops: [{ allow: 'call', tool: 'y' }] }, users: { 'key:carol': ['dev'], 'jwt:carol': ['ops'] }, groups: {}, everyone: [] } as never,
      'deny',
    );
    expect(policy.rolesOf({ id: 'carol', authMethod: 'api-key' })).toEqual(['dev']);
    expect(policy.rolesOf({ id: 'carol', authMethod: 'jwt' })).toEqual(['ops']);
  });

  it("a user's entry holds whatever case or Unicode composition the name arrives in: a deny cannot be sidestepped as Mallory", () => {
    const policy = new CompiledPolicy(
      policyDocumentSchema.parse({
        roles: { dev: [{ id: 'tools', allow: 'call', tool: '*' }], blocked: [{ id: 'blocked', deny: '*' }] },
        users: { 'jwt:mallory': ['blocked'], 'jwt:Jos\u00E9': ['blocked'] },
        everyone: ['dev'],
      }),
      'deny',
    );
    const call = (id: string) => policy.decide({ id, authMethod: 'jwt' }, 'call', 'Tool', { server: 'fx', name: 'fx__echo' });
    // An issuer's preferred_username or email as the user typed it at sign-in; José composed or not.
    for (const id of ['mallory', 'Mallory', 'MALLORY', 'José', 'JOSE\u0301', 'jose\u0301']) expect(call(id), id).toEqual({ allowed: false, rule: 'blocked' });
    expect(call('alice')).toEqual({ allowed: true, rule: 'tools' });
    // Still a name and its method: the API key mallory is not the token user.
    expect(policy.rolesOf({ id: 'Mallory', authMethod: 'api-key' })).toEqual(['dev']);
  });
});
