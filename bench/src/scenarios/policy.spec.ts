import { parse } from 'yaml';
import { CompiledPolicy, policyDocumentSchema } from '@switchboard/policy';
import { describe, expect, it } from 'vitest';
import { benchPolicy, POLICY_RULES } from './policy.js';

describe('the bench policy', () => {
  it('is a valid policy of 200 rules that allows the echo call and only through its last rule', () => {
    const doc = policyDocumentSchema.parse(parse(benchPolicy(POLICY_RULES)));
    expect(Object.values(doc.roles).reduce((n, rules) => n + rules.length, 0)).toBe(200);
    const policy = new CompiledPolicy(doc, doc.defaultEffect ?? 'deny');
    const fields = { server: 'bench', name: 'bench__echo', args: { text: 'hello from the bench' } };
    expect(policy.decide({ id: 'anonymous' }, 'call', 'Tool', fields)).toEqual({ allowed: true, rule: 'echo' });
    expect(policy.decide({ id: 'anonymous' }, 'call', 'Tool', { ...fields, server: 'other', name: 'other__x' }).allowed).toBe(false);
  });
});
