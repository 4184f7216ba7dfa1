import { CompiledPolicy, policyDocumentSchema } from '@switchboard/policy';
import { describe, expect, it } from 'vitest';
import { verdictOf } from './policy.js';

describe('policy check: the verdict it prints', () => {
  const policy = new CompiledPolicy(
    policyDocumentSchema.parse({
      roles: { ops: [{ allow: 'call', server: 'fs' }, { id: 'ask-deletes', confirm: 'call', tool: 'fs__delete' }] },
      everyone: ['ops'],
    }),
    'deny',
  );
  const verdict = (tool: string, server = 'fs') => verdictOf(policy.decide({ id: 'a', authMethod: 'api-key' }, 'call', 'Tool', { server, name: tool, args: {} }));

  it('allow, deny, and confirm for a call a person must approve first', () => {
    expect(verdict('fs__read')).toBe('allow');
    expect(verdict('x__read', 'x')).toBe('deny');
    expect(verdict('fs__delete')).toBe('confirm');
  });
});
