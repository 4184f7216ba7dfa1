import { describe, expect, it } from 'vitest';
import { claimAt } from './claim-path.js';

describe('claimAt', () => {
  it('follows dots into nested claims, as realm_access.roles', () => {
    const token = { sub: 'x', realm_access: { roles: ['dev'] }, a: { b: { c: 'deep' } } };
    expect(claimAt(token, 'sub')).toBe('x');
    expect(claimAt(token, 'realm_access.roles')).toEqual(['dev']);
    expect(claimAt(token, 'a.b.c')).toBe('deep');
    expect(claimAt(token, 'realm_access.nothing')).toBeUndefined();
    expect(claimAt(token, 'sub.length')).toBeUndefined(); // a string has no claims
  });

  it('takes a top-level key that holds dots and slashes whole: an Auth0 or Okta namespaced claim', () => {
    const token = { 'https://corp.example.com/roles': ['admin'], https: { '//corp': 'decoy' } };
    expect(claimAt(token, 'https://corp.example.com/roles')).toEqual(['admin']);
  });

  it('takes a dotted key in the middle of a path: Keycloak client roles under a client id that is a URL', () => {
    const token = { resource_access: { account: { roles: ['view'] }, 'https://gateway.internal/mcp': { roles: ['dev', 'ops'] } } };
    expect(claimAt(token, 'resource_access.https://gateway.internal/mcp.roles')).toEqual(['dev', 'ops']);
    expect(claimAt(token, 'resource_access.account.roles')).toEqual(['view']);
    expect(claimAt({ resource_access: { 'gw.example.com': { roles: ['r'] } } }, 'resource_access.gw.example.com.roles')).toEqual(['r']);
  });

  it('prefers the longest key at each level, and does not try a shorter one when the longest leads nowhere', () => {
    expect(claimAt({ 'a.b': 'whole', a: { b: 'nested' } }, 'a.b')).toBe('whole');
    expect(claimAt({ 'a.b': { c: 1 }, a: { b: { c: 2 } } }, 'a.b.c')).toBe(1);
    // A key must end at a dot or the end of the path, not in the middle of a name.
    expect(claimAt({ rol: { es: 'no' } }, 'roles')).toBeUndefined();
    expect(claimAt({ 'a.b': 'x' }, 'a.bc')).toBeUndefined();
  });

  it("finds own keys only: no Object prototype members, whatever the path", () => {
    expect(claimAt({}, 'constructor')).toBeUndefined();
    expect(claimAt({ roles: [] }, 'roles.constructor')).toBeUndefined();
    expect(claimAt({ a: {} }, 'a.__proto__')).toBeUndefined();
    expect(claimAt(JSON.parse('{"__proto__": {"roles": ["x"]}}'), '__proto__.roles')).toEqual(['x']);
  });

  it('copes with paths made of dots alone or with empty parts', () => {
    expect(claimAt({ a: 1 }, '.')).toBeUndefined();
    expect(claimAt({ a: 1 }, '..a')).toBeUndefined();
    expect(claimAt({ a: { '': 1 } }, 'a.')).toBe(1);
  });
});
