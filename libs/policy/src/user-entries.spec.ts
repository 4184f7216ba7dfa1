import { describe, expect, it } from 'vitest';
import { policyDocumentSchema } from './policy-document.js';
import { unmatchableUserEntries } from './user-entries.js';

const docWith = (users: Record<string, string[]>) => policyDocumentSchema.parse({ roles: { dev: [] }, users });

describe('unmatchableUserEntries: users: entries no caller can have', () => {
  const why = "names an API key, and no key can have that name (1-64 ASCII letters (A-Z, a-z), digits, '.', '_', '@' or '-', starting with a letter or digit), so the entry never matches a caller";

  it('an API key name no key can have; with auth.jwt configured, the token user it most likely meant', () => {
    const doc = docWith({ 'alice+ops@corp.example.com': ['dev'], 'key:bob smith': ['dev'], 'Élodie': ['dev'] });
    expect(unmatchableUserEntries(doc, { jwt: {} })).toEqual([
      { path: 'users["alice+ops@corp.example.com"]', reason: `${why} (did you mean \`jwt:alice+ops@corp.example.com\`?)` },
      { path: 'users["key:bob smith"]', reason: `${why} (did you mean \`jwt:bob smith\`?)` },
      { path: 'users["Élodie"]', reason: `${why} (did you mean \`jwt:Élodie\`?)` },
    ]);
    // Without auth.jwt no token user can be named either: nothing to suggest.
    expect(unmatchableUserEntries(doc, {}).map((w) => w.reason)).toEqual([why, why, why]);
    // Without a config, how a token user is written.
    expect(unmatchableUserEntries(doc, undefined)[0]!.reason).toBe(`${why}; a token user is jwt:NAME (docs/auth.md, Callers by name)`);
  });

  it('takes every name a key can have, as matching folds it: an e-mail address is a valid key name', () => {
    // A key can be named alice@corp.example.com: the entry serves that key, whatever the token users.
    const doc = docWith({ 'alice@corp.example.com': ['dev'], 'ALICE.B': ['dev'], 'key:carol-1': ['dev'], '1234': ['dev'], 'jwt:anything goes': ['dev'], 'stdio:uid:1000': ['dev'] });
    expect(unmatchableUserEntries(doc, { jwt: {} })).toEqual([]);
    // The Kelvin sign folds to k (foldCallerName): the entry matches the key kim.
    expect(unmatchableUserEntries(docWith({ '\u212Aim': ['dev'] }), { jwt: {} })).toEqual([]);
  });
});
