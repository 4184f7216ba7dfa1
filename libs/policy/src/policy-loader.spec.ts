import { ConfigError } from '@switchboard/config';
import { MAX_CALLER_NAME_CHARS, MAX_PRINCIPAL_CHARS } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { loadPolicyBytes } from './policy-loader.js';
import { actionsOutsideSelectors } from './rule-actions.js';

/** The problems a policy file is refused with, as `path: reason`. */
function problemsOf(yaml: string): string[] {
  try {
    loadPolicyBytes('policy.yaml', Buffer.from(yaml));
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => `${p.path}: ${p.reason}`);
    throw error;
  }
  return [];
}

describe('a policy file with mistakes', () => {
  it('names what a condition key must be, not zod\'s "Invalid key in record"', () => {
    expect(problemsOf('roles:\n  dev:\n    - { deny: call, tool: y, when: { path: { eq: 1 } } }\n')).toEqual([
      'roles.dev.0.when.path: conditions name an argument: args.<name>',
    ]);
  });

  it('names an unknown key, at the top as in a rule, with the key it most likely meant', () => {
    // `user:` for `users:` was refused as "must be a mapping with roles (and optionally ...)",
    // which a file that is such a mapping cannot act on; a rule's `tol:` said zod's
    // 'Unrecognized key: "tol"'.
    const yaml = ['roles:', '  dev:', '    - { id: a, allow: call, tol: "github__*" }', 'user: { alice: [dev] }', 'defaulteffect: deny', 'extra: 1'].join('\n');
    expect(problemsOf(yaml)).toEqual([
      'roles.dev.0.tol: unknown key (did you mean `tool`?)',
      'user: unknown key (did you mean `users`?)',
      'defaulteffect: unknown key (did you mean `defaultEffect`?)',
      'extra: unknown key (known here: defaultEffect, roles, users, groups, everyone)',
    ]);
  });

  it('names the role a misspelt one most likely meant, as `keys create --roles` does', () => {
    expect(problemsOf('roles: { admin: [], dev: [] }\nusers: { alice: [admn] }\neveryone: [developer]')).toEqual([
      "users.alice.0: no role 'admn' is defined under roles (did you mean `admin`?)",
      "everyone.0: no role 'developer' is defined under roles",
    ]);
  });

  it('says what eq, in and notIn take, not zod\'s "Invalid input" or "Too small"', () => {
    const rule = (test: string) => `roles:\n  dev:\n    - { allow: call, tool: x, when: { args.a: { ${test} } } }\n`;
    const at = 'roles.dev.0.when["args.a"]';
    const value = 'must be a string, a finite number or a boolean (true or false)';
    expect(problemsOf(rule('eq: ~'))).toEqual([`${at}.eq: ${value}`]);
    expect(problemsOf(rule('eq: .inf'))).toEqual([`${at}.eq: ${value}`]);
    expect(problemsOf(rule('eq: [a]'))).toEqual([`${at}.eq: ${value}`]);
    expect(problemsOf(rule('in: [a, ~]'))).toEqual([`${at}.in.1: ${value}`]);
    expect(problemsOf(rule('in: []'))).toEqual([`${at}.in: must list at least one value`]);
    expect(problemsOf(rule('notIn: []'))).toEqual([`${at}.notIn: must list at least one value`]);
    expect(problemsOf(rule('in: a'))).toEqual([`${at}.in: must be a list`]);
  });

  it('still says what the file must be when it is no mapping', () => {
    expect(problemsOf('')).toEqual([': must be a mapping with roles (and optionally users, groups, everyone, defaultEffect)']);
  });

  it('says a key left out is required, and what a key given must be', () => {
    expect(problemsOf('users: { alice: [dev] }')).toEqual(['roles: is required', "users.alice.0: no role 'dev' is defined under roles"]);
    expect(problemsOf('roles: [dev]')).toEqual(['roles: must be a mapping (an object)']);
    expect(problemsOf('roles: { dev: [ { allow: call, when: { args.path: { in: 1 } } } ] }')).toEqual(['roles.dev.0.when["args.path"].in: must be a list']);
  });
});

describe('approvers of a confirm rule', () => {
  it('takes roles the file defines, and names a misspelt one: an approver nobody can be would leave every call waiting', () => {
    expect(problemsOf('roles: { lead: [], dev: [ { confirm: call, tool: "x__*", approvers: [lead] } ] }')).toEqual([]);
    expect(problemsOf('roles: { lead: [], dev: [ { confirm: call, tool: "x__*", approvers: [leed, ops] } ] }')).toEqual([
      "roles.dev.0.approvers.0: no role 'leed' is defined under roles (did you mean `lead`?)",
      "roles.dev.0.approvers.1: no role 'ops' is defined under roles",
    ]);
  });

  it('refuses approvers on a rule that confirms nothing, and an empty list', () => {
    expect(problemsOf('roles: { lead: [], dev: [ { allow: call, tool: "x__*", approvers: [lead] } ] }')).toEqual([
      "roles.dev.0.approvers: approvers name who approves a confirm rule's calls: this rule has no confirm",
    ]);
    expect(problemsOf('roles: { lead: [], dev: [ { confirm: call, tool: "x__*", approvers: [] } ] }')).toEqual([
      'roles.dev.0.approvers: list at least one role, or leave approvers out (the caller then confirms its own calls)',
    ]);
  });
});

describe('every problem of a policy file in one round', () => {
  it('lists undefined roles and duplicate ids also when the schema refuses a rule', () => {
    const yaml = [
      'roles:',
      '  dev:',
      '    - { id: a, allow: cal, tool: x }',
      '    - { id: a, allow: call, tool: y }',
      'users: { zed: [dev, nope] }',
      'groups: { eng: oops }',
      'everyone: [ghost]',
    ].join('\n');
    expect(problemsOf(yaml)).toEqual([
      'roles.dev.0.allow: must be one of list, call, read, subscribe, get, complete, sample, elicit, log, *, or a list of them',
      'groups.eng: must be a list',
      "users.zed.1: no role 'nope' is defined under roles",
      "everyone.0: no role 'ghost' is defined under roles",
      "roles.dev.1.id: rule id 'a' is used twice (also at roles.dev.0.id): audit rows must name one rule",
    ]);
  });

  it('users: refuses what is no caller name, and two entries for one caller (key:alice is alice)', () => {
    const yaml = ['roles: { dev: [ { allow: call, tool: x } ] }', 'users: { alice: [dev], "key:alice": [dev], "oidc:bob": [dev], "jwt:bob": [dev] }'].join('\n');
    expect(problemsOf(yaml)).toEqual([
      'users["key:alice"]: names the same caller as users.alice',
      "users[\"oidc:bob\"]: not a caller name: an API key's name (or key:NAME), or jwt:, stdio: or loopback: and a name (docs/auth.md, Callers by name)",
    ]);
  });

  it('users: refuses two entries whose names differ only in case or Unicode composition: they match the same callers', () => {
    const yaml = ['roles: { dev: [ { allow: call, tool: x } ] }', 'users: { "jwt:erin": [dev], "jwt:Erin": [dev], "jwt:Jos\u00E9": [dev], "jwt:jose\u0301": [dev] }'].join('\n');
    expect(problemsOf(yaml)).toEqual([
      'users["jwt:Erin"]: names the same caller as users["jwt:erin"] (names are matched without regard to case or Unicode composition)',
      'users["jwt:jose\u0301"]: names the same caller as users["jwt:Jos\u00E9"] (names are matched without regard to case or Unicode composition)',
    ]);
  });

  it('users: takes a token user with the longest principal a token may carry, and refuses a name no caller can have', () => {
    const roles = 'roles: { dev: [ { allow: call, tool: x } ] }';
    expect(problemsOf(`${roles}\nusers: { "jwt:${'u'.repeat(MAX_PRINCIPAL_CHARS)}": [dev] }`)).toEqual([]);
    const tooLong = 'u'.repeat(MAX_CALLER_NAME_CHARS + 1);
    expect(problemsOf(`${roles}\nusers: { ${tooLong}: [dev] }`)).toEqual([`users.${tooLong}: Too big: expected string to have <=${MAX_CALLER_NAME_CHARS} characters`]);
  });

  it('a file that is not a mapping gives the one problem', () => {
    expect(problemsOf('[1, 2]')).toEqual([': must be a mapping with roles (and optionally users, groups, everyone, defaultEffect)']);
  });
});

describe('a rule whose actions do not apply to the kind of item it selects', () => {
  it('is refused when none of them does, saying which selector the action takes', () => {
    const yaml = [
      'roles:',
      '  dev:',
      '    - { allow: call, resource: every__echo }',
      '    - { deny: [get, complete], tool: "x*" }',
      '    - { allow: sample, prompt: p }',
      '    - { allow: [read, subscribe], prompt: p }',
    ].join('\n');
    expect(problemsOf(yaml)).toEqual([
      'roles.dev.0: call does not apply to resources and templates, which resource: selects (they take list, read, subscribe and complete), so the rule would never apply; call applies to tools: select them with tool:',
      'roles.dev.1: get and complete do not apply to tools, which tool: selects (they take list and call), so the rule would never apply; get applies to prompts: select them with prompt:',
      'roles.dev.2: sample does not apply to prompts, which prompt: selects (they take list, get and complete), so the rule would never apply; sample applies to upstreams: select them with server: alone',
      'roles.dev.3: read and subscribe do not apply to prompts, which prompt: selects (they take list, get and complete), so the rule would never apply; read applies to resources: select them with resource:',
    ]);
  });

  it('loads when one of them does (the rest is a warning: actionsOutsideSelectors), and with * or no item selector', () => {
    const yaml = [
      'roles:',
      '  dev:',
      '    - { id: mixed, allow: [list, call], resource: "every__echo" }',
      '    - { deny: "*", tool: "x*" }',
      '    - { allow: [call, read, sample], server: fs }',
      '    - { allow: [get, complete] }',
      '    - { confirm: call, tool: "fs__*" }',
    ].join('\n');
    expect(problemsOf(yaml)).toEqual([]);
    expect(actionsOutsideSelectors(loadPolicyBytes('policy.yaml', Buffer.from(yaml)))).toEqual([
      {
        path: 'roles.dev.0.allow',
        reason:
          'call does not apply to resources and templates, which resource: selects (they take list, read, subscribe and complete), so the rule applies to list only; call applies to tools: select them with tool:',
      },
    ]);
  });
});
