import { describe, expect, it } from 'vitest';
import { callerKey, callerName, canonicalCallerName, foldCallerName, parseCallerName } from './caller-name.js';

describe('callerName: one string per caller, method included', () => {
  it('writes a key holder by its name and every other caller with its method', () => {
    expect(callerName({ id: 'alice', authMethod: 'api-key' })).toBe('alice');
    expect(callerName({ id: 'alice', authMethod: 'jwt' })).toBe('jwt:alice');
    expect(callerName({ id: 'bob', authMethod: 'stdio' })).toBe('stdio:bob');
    expect(callerName({ id: 'anonymous', authMethod: 'loopback' })).toBe('loopback:anonymous');
  });

  it('gives a key and a token with the same name (an email, say) two names', () => {
    expect(callerName({ id: 'alice@example.com', authMethod: 'api-key' })).not.toBe(callerName({ id: 'alice@example.com', authMethod: 'jwt' }));
  });

  it('reads back what it writes, and key:NAME as the bare name', () => {
    for (const caller of [
      { id: 'alice', authMethod: 'api-key' },
      { id: 'urn:idp:7f3a', authMethod: 'jwt' },
      { id: 'uid:1000', authMethod: 'stdio' },
    ]) {
      expect(parseCallerName(callerName(caller))).toEqual(caller);
    }
    expect(canonicalCallerName('key:alice')).toBe('alice');
  });

  it('refuses a prefix it does not know, and an empty name', () => {
    expect(parseCallerName('oidc:alice')).toBeUndefined();
    // Names of Object's own members are no prefixes either (they once gave `function Object() ...:bob`).
    for (const prefix of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) expect(parseCallerName(`${prefix}:bob`)).toBeUndefined();
    expect(parseCallerName('jwt:')).toBeUndefined();
    expect(parseCallerName('')).toBeUndefined();
  });
});

describe('callerKey: the name policies and limits match a caller by', () => {
  it('is its caller name without regard to case or Unicode composition', () => {
    expect(callerKey({ id: 'Mallory', authMethod: 'jwt' })).toBe('jwt:mallory');
    expect(callerKey({ id: 'MALLORY', authMethod: 'api-key' })).toBe('mallory');
    expect(callerKey({ id: 'Jose\u0301', authMethod: 'jwt' })).toBe(callerKey({ id: 'JOS\u00C9', authMethod: 'jwt' }));
    // Upper case first, then lower: ß and SS, the final and the middle sigma meet.
    expect(foldCallerName('jwt:STRASSE')).toBe(foldCallerName('jwt:stra\u00DFe'));
    expect(foldCallerName('jwt:\u039F\u0394\u039F\u03A3')).toBe(foldCallerName('jwt:\u03BF\u03B4\u03BF\u03C2'));
  });

  it('keeps the method: a key and a token user of one name stay two callers', () => {
    expect(callerKey({ id: 'alice', authMethod: 'api-key' })).not.toBe(callerKey({ id: 'Alice', authMethod: 'jwt' }));
  });
});
