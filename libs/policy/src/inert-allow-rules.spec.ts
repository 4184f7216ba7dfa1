import { describe, expect, it } from 'vitest';
import { inertAllowRules } from './inert-allow-rules.js';
import type { PolicyDocument } from './policy-document.js';

const doc = (roles: PolicyDocument['roles']): PolicyDocument => ({ roles }) as PolicyDocument;

describe('inertAllowRules: allow rules a default of allow leaves with nothing to decide', () => {
  it('names each allow rule by its id, or role#n as audit rows do, in file order', () => {
    const policy = doc({
      dev: [{ id: 'dev-read', allow: ['list', 'call'], tool: 'every__echo' }, { allow: 'call', server: 'git' }],
      ops: [{ allow: 'read', resource: '**' }],
    });
    expect(inertAllowRules(policy, 'allow')).toEqual(['dev-read', 'dev#2', 'ops#1']);
  });

  it('leaves out deny and confirm rules, which beat the default, and allow rules that reach sampling', () => {
    const policy = doc({
      dev: [
        { id: 'no-delete', deny: 'call', tool: 'git__delete_*' },
        { id: 'ask', confirm: 'call', server: 'fs' },
        { id: 'sampling-ok', allow: 'sample', server: 'everything' },
        { id: 'all', allow: '*' },
        { id: 'mixed', allow: ['call', 'sample'], server: 'everything' },
      ],
    });
    expect(inertAllowRules(policy, 'allow')).toEqual([]);
  });

  it('finds none under a default of deny, where every allow rule is what serves', () => {
    expect(inertAllowRules(doc({ dev: [{ id: 'dev-read', allow: 'call', tool: 'x' }] }), 'deny')).toEqual([]);
  });
});
