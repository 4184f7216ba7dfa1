import { describe, expect, it } from 'vitest';
import { ownerFields } from './session-fields.js';

describe('ownerFields', () => {
  it("gives a per-principal connection's owner (a caller name) as the principal and method every other row of that caller has", () => {
    expect(ownerFields('jwt:erin')).toEqual({ principal: 'erin', authMethod: 'jwt' });
    expect(ownerFields('alice')).toEqual({ principal: 'alice', authMethod: 'api-key' });
    expect(ownerFields('stdio:uid:1000')).toEqual({ principal: 'uid:1000', authMethod: 'stdio' });
  });
});
