import { describe, expect, it } from 'vitest';
import { assignPublicNames, type NameRequest } from './naming.js';

const req = (server: string, name: string, mode: NameRequest['mode'] = 'prefix', prefix = server): NameRequest => ({
  server,
  prefix,
  mode,
  name,
});

describe('assignPublicNames', () => {
  it('prefixes with <server>__<name> by default', () => {
    expect(assignPublicNames([req('github', 'create_issue')])).toEqual(['github__create_issue']);
  });

  it('uses the alias as the prefix', () => {
    expect(assignPublicNames([req('github-enterprise', 'x', 'prefix', 'ghe')])).toEqual(['ghe__x']);
  });

  it('replaces characters hosts reject in the prefix', () => {
    expect(assignPublicNames([req('my server.io', 'x')])).toEqual(['my_server_io__x']);
  });

  it('auto prefixes only colliding names, all of them', () => {
    const out = assignPublicNames([req('a', 'search', 'auto'), req('b', 'search', 'auto'), req('b', 'fetch', 'auto')]);
    expect(out).toEqual(['a__search', 'b__search', 'fetch']);
  });

  it('none keeps names; on a collision the first server keeps it and later ones are prefixed', () => {
    const out = assignPublicNames([req('a', 'echo', 'none'), req('b', 'echo', 'none'), req('b', 'add', 'none')]);
    expect(out).toEqual(['echo', 'b__echo', 'add']);
  });

  it('a prefix-mode server does not contest a bare name: none and auto keep it', () => {
    const none = assignPublicNames([req('a', 'add'), req('b', 'add'), req('c', 'add', 'none')]);
    expect(none).toEqual(['a__add', 'b__add', 'add']);
    const auto = assignPublicNames([req('a', 'add'), req('c', 'add', 'auto')]);
    expect(auto).toEqual(['a__add', 'add']);
  });

  describe('with held names (what the names meant before)', () => {
    const held = (entries: Record<string, [string, string]>) =>
      new Map(Object.entries(entries).map(([publicName, [server, name]]) => [publicName, { server, name }]));

    it('none: the holder keeps a contested name; a server added ahead of it is prefixed', () => {
      const requests = [req('a0', 'echo', 'none'), req('b', 'echo', 'none')];
      expect(assignPublicNames(requests)).toEqual(['echo', 'b__echo']);
      expect(assignPublicNames(requests, undefined, held({ echo: ['b', 'echo'] }))).toEqual(['a0__echo', 'echo']);
    });

    it('auto: the holder keeps its bare name when a newcomer offers the same one', () => {
      const requests = [req('a', 'search', 'auto'), req('b', 'search', 'auto')];
      expect(assignPublicNames(requests)).toEqual(['a__search', 'b__search']);
      expect(assignPublicNames(requests, undefined, held({ search: ['b', 'search'] }))).toEqual(['a__search', 'search']);
    });

    it('a name held by a server that is absent (down, still configured) is given to no one', () => {
      expect(assignPublicNames([req('b', 'echo', 'none')], undefined, held({ echo: ['a', 'echo'] }))).toEqual(['b__echo']);
      // Nor as the fallback of a clash on another string.
      const out = assignPublicNames([req('x', 'y__echo'), req('y', 'echo')], undefined, held({ y__echo: ['gone', 'echo'] }));
      expect(out).not.toContain('y__echo');
      expect(new Set(out).size).toBe(2);
    });

    it('a held name no longer in force is settled by config order again', () => {
      const requests = [req('a', 'echo', 'none'), req('b', 'echo', 'none')];
      // b no longer offers echo under that original name: a stale claim.
      expect(assignPublicNames(requests, undefined, held({ echo: ['b', 'other'] }))).toEqual(['echo', 'b__echo']);
      // b is in prefix mode now: it gave the bare name up.
      const switched = [req('a', 'echo', 'none'), req('b', 'echo', 'prefix')];
      expect(assignPublicNames(switched, undefined, held({ echo: ['b', 'echo'] }))).toEqual(['echo', 'b__echo']);
    });

    it('the holder of a string two pairs meet on keeps it', () => {
      // a__b's c and a's b__c both want a__b__c; without history the first in order keeps it.
      const requests = [req('a__b', 'c'), req('a', 'b__c')];
      const fresh = assignPublicNames(requests);
      expect(fresh[0]).toBe('a__b__c');
      const out = assignPublicNames(requests, undefined, held({ a__b__c: ['a', 'b__c'] }));
      expect(out[1]).toBe('a__b__c');
      expect(out[0]).not.toBe('a__b__c');
    });
  });

  it('keeps every name within 64 characters with a stable hash suffix', () => {
    const long = 'x'.repeat(80);
    const [a] = assignPublicNames([req('server', long)]);
    const [again] = assignPublicNames([req('server', long)]);
    expect(a.length).toBe(64);
    expect(a).toBe(again);
    expect(a.startsWith('server__xxx')).toBe(true);
    expect(a).toMatch(/_[0-9a-f]{8}$/);
  });

  it('a name of exactly 64 characters is kept as it is', () => {
    const name = 'y'.repeat(64 - 'srv__'.length);
    expect(assignPublicNames([req('srv', name)])).toEqual([`srv__${name}`]);
  });

  it('two long names sharing their first 64 characters stay distinct', () => {
    const base = 'z'.repeat(70);
    const out = assignPublicNames([req('s', `${base}_one`), req('s', `${base}_two`)]);
    expect(out[0]).not.toBe(out[1]);
    expect(out.every((n) => n.length <= 64)).toBe(true);
  });

  it('never produces a collision when a prefix contains the separator', () => {
    const out = assignPublicNames([req('a__b', 'c'), req('a', 'b__c')]);
    expect(new Set(out).size).toBe(2);
    expect(out[0]).toBe('a__b__c');
  });

  it('stays within the characters hosts accept when a bare name equals the hashed form too', () => {
    // x offers echo and y__echo, so y's echo is hashed; x also offers, by chance, that hashed
    // form, so y's echo is hashed again.
    const hashed = assignPublicNames([req('x', 'y__echo', 'none'), req('x', 'echo', 'none'), req('y', 'echo', 'none')])[2];
    expect(hashed).toMatch(/^y__echo_[0-9a-f]{8}$/);
    const out = assignPublicNames([req('x', 'y__echo', 'none'), req('x', hashed, 'none'), req('x', 'echo', 'none'), req('y', 'echo', 'none')]);
    expect(new Set(out).size).toBe(4);
    for (const name of out) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('shortens very long server names in the prefix', () => {
    const [name] = assignPublicNames([req('a-very-long-server-name-that-goes-on-and-on', 'tool')]);
    expect(name.length).toBeLessThanOrEqual(64);
    expect(name.endsWith('__tool')).toBe(true);
  });
});
