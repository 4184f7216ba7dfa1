import { describe, expect, it } from 'vitest';
import type { UpstreamSnapshot } from './catalog.types.js';
import { assignUriPrefixes } from './uri-prefixes.js';

const snap = (server: string, prefix = server): UpstreamSnapshot => ({
  server,
  prefix,
  namespace: 'prefix',
  tools: [],
  prompts: [],
  resources: [],
  resourceTemplates: [],
});

describe('assignUriPrefixes', () => {
  it("retires a server's prefix on an alias change, and gives it back to that server only", () => {
    const first = assignUriPrefixes([snap('a', 'one')], new Map(), new Map(), 10);
    const second = assignUriPrefixes([snap('a', 'two'), snap('c', 'one')], first.current, first.retired, 10);
    expect(second.current).toEqual(new Map([['a', 'two'], ['c', expect.stringMatching(/^one-[0-9a-f]{8}$/)]]));
    expect(second.retired).toEqual(new Map([['one', 'a']]));
    // a takes its old alias back: the prefix is its own again, and two is retired instead.
    const third = assignUriPrefixes([snap('a', 'one'), snap('c', 'one')], second.current, second.retired, 10);
    expect(third.current.get('a')).toBe('one');
    expect(third.current.get('c')).toBe(second.current.get('c'));
    expect(third.retired).toEqual(new Map([['two', 'a']]));
  });

  it('keeps the newest retired prefixes of a server up to the limit', () => {
    let held = { current: new Map<string, string>(), retired: new Map<string, string>() };
    for (const alias of ['p0', 'p1', 'p2', 'p3']) held = assignUriPrefixes([snap('a', alias), snap('b')], held.current, held.retired, 2);
    expect([...held.retired]).toEqual([['p1', 'a'], ['p2', 'a']]);
    expect(held.current.get('a')).toBe('p3');
  });
});
