import { describe, expect, it } from 'vitest';
import { PolicyEngine } from './policy-engine.js';
import { policyDocumentSchema } from './policy-document.js';

describe('PolicyEngine.decide: a resource as an SDK server reads its URI', () => {
  const engine = new PolicyEngine(
    policyDocumentSchema.parse({
      everyone: ['reader'],
      roles: {
        reader: [
          { id: 'public', allow: ['read', 'subscribe'], resource: 'demo://x/public/**' },
          { id: 'no-secret', deny: '*', resource: 'demo://x/secret/**' },
          { id: 'spaced', allow: 'read', resource: 'file:///docs/a b.md' },
        ],
      },
    }),
    'allow',
  );
  const anyone = { id: 'anonymous', authMethod: 'loopback' };
  const read = (uri: string, action = 'read') => engine.decide(anyone, action, 'Resource', { server: 'demo', uri });

  it('refuses a spelling that reads as a denied URI, or as one outside the allow', () => {
    expect(read('DEMO://x/secret/key')).toEqual({ allowed: false, rule: 'no-secret' });
    expect(read('demo://x/public/.\t./.\t./secret/key', 'subscribe')).toEqual({ allowed: false, rule: 'no-secret' });
  });

  it('decides as before where the reading is the same URI, or differs only by the percent-encoding the parse adds', () => {
    expect(read('demo://x/public/a')).toEqual({ allowed: true, rule: 'public' });
    expect(read('file:///docs/a b.md')).toEqual({ allowed: true, rule: 'spaced' });
    // Lists and completions are not lookups by URI: judged as written.
    expect(read('DEMO://x/secret/key', 'list')).toEqual({ allowed: true, rule: 'policy:default-allow' });
  });
});
