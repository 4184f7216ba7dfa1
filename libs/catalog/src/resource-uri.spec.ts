import { describe, expect, it } from 'vitest';
import { isGatewayUri, parseGatewayUri, toGatewayUri } from './resource-uri.js';

describe('gateway URIs', () => {
  it('appends the original verbatim after the prefix', () => {
    expect(toGatewayUri('docs', 'file:///srv/a%20b.md?rev=2#top')).toBe('switchboard://docs/file:///srv/a%20b.md?rev=2#top');
  });

  it.each([
    'file:///srv/readme.md',
    'https://example.com/a/b?c=d&e=f',
    'postgres://db/users/schema',
    'switchboard://inner/file:///nested',
    'urn:isbn:0451450523',
    '',
  ])('round-trips %j', (original) => {
    expect(parseGatewayUri(toGatewayUri('srv_1', original))).toEqual({ prefix: 'srv_1', original });
  });

  it('keeps URI template expressions intact', () => {
    const rewritten = toGatewayUri('fs2', 'file:///{+path}{?q}');
    expect(rewritten).toBe('switchboard://fs2/file:///{+path}{?q}');
    expect(parseGatewayUri(rewritten)?.original).toBe('file:///{+path}{?q}');
  });

  it('does not parse other schemes or a gateway URI without a prefix', () => {
    expect(parseGatewayUri('file:///x')).toBeUndefined();
    expect(parseGatewayUri('switchboard:///x')).toBeUndefined();
    expect(parseGatewayUri('switchboard://only-prefix')).toBeUndefined();
    expect(isGatewayUri('switchboard:/x')).toBe(false);
  });

  it('refuses a prefix that would make the split ambiguous', () => {
    expect(() => toGatewayUri('a/b', 'x')).toThrow(RangeError);
    expect(() => toGatewayUri('', 'x')).toThrow(RangeError);
  });
});
