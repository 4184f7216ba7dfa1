import { describe, expect, it } from 'vitest';
import { assignPublicNames, type HeldName, type NameRequest } from './naming.js';

const req = (server: string, name: string, mode: NameRequest['mode'] = 'prefix', prefix = server): NameRequest => ({
  server,
  prefix,
  mode,
  name,
});

/** Only the names: most cases here are about them, not about what their claims record. */
const names = (...args: Parameters<typeof assignPublicNames>) => assignPublicNames(...args).map((n) => n.name);

describe('assignPublicNames', () => {
  it('prefixes with <server>__<name> by default', () => {
    expect(names([req('github', 'create_issue')])).toEqual(['github__create_issue']);
  });

  it('uses the alias as the prefix', () => {
    expect(names([req('github-enterprise', 'x', 'prefix', 'ghe')])).toEqual(['ghe__x']);
  });

  it('replaces characters hosts reject in the prefix', () => {
    expect(names([req('my server.io', 'x')])).toEqual(['my_server_io__x']);
  });

  it('auto prefixes only colliding names, all of them', () => {
    const out = names([req('a', 'search', 'auto'), req('b', 'search', 'auto'), req('b', 'fetch', 'auto')]);
    expect(out).toEqual(['a__search', 'b__search', 'fetch']);
  });

  it('none keeps names; on a collision the first server keeps it and later ones are prefixed', () => {
    const out = names([req('a', 'echo', 'none'), req('b', 'echo', 'none'), req('b', 'add', 'none')]);
    expect(out).toEqual(['echo', 'b__echo', 'add']);
  });

  it('a prefix-mode server does not contest a bare name: none and auto keep it', () => {
    const none = names([req('a', 'add'), req('b', 'add'), req('c', 'add', 'none')]);
    expect(none).toEqual(['a__add', 'b__add', 'add']);
    const auto = names([req('a', 'add'), req('c', 'add', 'auto')]);
    expect(auto).toEqual(['a__add', 'add']);
  });

  describe('with held names (what the names meant before)', () => {
    const held = (entries: Record<string, [string, string]>) =>
      new Map(Object.entries(entries).map(([publicName, [server, name]]) => [publicName, { server, name }]));

    it('none: the holder keeps a contested name; a server added ahead of it is prefixed', () => {
      const requests = [req('a0', 'echo', 'none'), req('b', 'echo', 'none')];
      expect(names(requests)).toEqual(['echo', 'b__echo']);
      expect(names(requests, undefined, held({ echo: ['b', 'echo'] }))).toEqual(['a0__echo', 'echo']);
    });

    it('auto: the holder keeps its bare name when a newcomer offers the same one', () => {
      const requests = [req('a', 'search', 'auto'), req('b', 'search', 'auto')];
      expect(names(requests)).toEqual(['a__search', 'b__search']);
      expect(names(requests, undefined, held({ search: ['b', 'search'] }))).toEqual(['a__search', 'search']);
    });

    it('a name held by a server that is absent (down, still configured) is given to no one', () => {
      expect(names([req('b', 'echo', 'none')], undefined, held({ echo: ['a', 'echo'] }))).toEqual(['b__echo']);
      // Nor as the fallback of a clash on another string.
      const out = names([req('x', 'y__echo'), req('y', 'echo')], undefined, held({ y__echo: ['gone', 'echo'] }));
      expect(out).not.toContain('y__echo');
      expect(new Set(out).size).toBe(2);
    });

    it('a held name stays reserved for its holder when it no longer asks for it under that name', () => {
      const requests = [req('a', 'echo', 'none'), req('b', 'echo', 'none')];
      // b offers no tool named other any more; echo meant that tool, so neither echo takes it.
      expect(names(requests, undefined, held({ echo: ['b', 'other'] }))).toEqual(['a__echo', 'b__echo']);
      // b is in prefix mode now: its own name is prefixed, and the bare one is still not a's.
      const switched = [req('a', 'echo', 'none'), req('b', 'echo', 'prefix')];
      expect(names(switched, undefined, held({ echo: ['b', 'echo'] }))).toEqual(['a__echo', 'b__echo']);
      // b dropped echo (its list changed): the same.
      expect(names([req('a', 'echo', 'none')], undefined, held({ echo: ['b', 'echo'] }))).toEqual(['a__echo']);
    });

    it('records who was kept off a bare name another server had, and keeps it off once the name is free', () => {
      const first = assignPublicNames([req('a', 'env', 'none'), req('b', 'env', 'none'), req('b', 'echo', 'none')]);
      expect(first).toEqual([
        { name: 'env', displaced: false },
        { name: 'b__env', displaced: true },
        { name: 'echo', displaced: false },
      ]);
      const claims = new Map<string, HeldName>([
        ['env', { server: 'a', name: 'env' }],
        ['b__env', { server: 'b', name: 'env', displaced: true }],
      ]);
      // a drops env: its name stays reserved, and b keeps the name hosts know its tool by.
      expect(assignPublicNames([req('b', 'env', 'none')], undefined, claims)).toEqual([{ name: 'b__env', displaced: true }]);
      // a removed from the config (its claim is gone): b still never takes env, in auto or none,
      // but a server offering env afresh may; b no longer contests it.
      const freed = new Map([...claims].filter(([, h]) => h.server !== 'a'));
      expect(names([req('b', 'env', 'auto')], undefined, freed)).toEqual(['b__env']);
      expect(names([req('b', 'env', 'none'), req('c', 'env', 'auto')], undefined, freed)).toEqual(['b__env', 'env']);
      // An alias change renames the prefixed form; the bare name is still not b's.
      expect(assignPublicNames([req('b', 'env', 'none', 'bee')], undefined, freed)).toEqual([{ name: 'bee__env', displaced: true }]);
    });

    it('an auto name prefixed because two servers offered it is not kept off the bare name', () => {
      const both = assignPublicNames([req('a', 'echo', 'auto'), req('b', 'echo', 'auto')]);
      expect(both).toEqual([
        { name: 'a__echo', displaced: false },
        { name: 'b__echo', displaced: false },
      ]);
      // b removed from the config: nobody ever had echo, so a takes it (a__echo stays a's).
      const claims = new Map<string, HeldName>([['a__echo', { server: 'a', name: 'echo' }]]);
      expect(names([req('a', 'echo', 'auto')], undefined, claims)).toEqual(['echo']);
    });

    it('the holder of a string two pairs meet on keeps it', () => {
      // a__b's c and a's b__c both want a__b__c; without history the first in order keeps it.
      const requests = [req('a__b', 'c'), req('a', 'b__c')];
      const fresh = names(requests);
      expect(fresh[0]).toBe('a__b__c');
      const out = names(requests, undefined, held({ a__b__c: ['a', 'b__c'] }));
      expect(out[1]).toBe('a__b__c');
      expect(out[0]).not.toBe('a__b__c');
    });
  });

  it('keeps every name within 64 characters with a stable hash suffix', () => {
    const long = 'x'.repeat(80);
    const [a] = names([req('server', long)]);
    const [again] = names([req('server', long)]);
    expect(a.length).toBe(64);
    expect(a).toBe(again);
    expect(a.startsWith('server__xxx')).toBe(true);
    expect(a).toMatch(/_[0-9a-f]{8}$/);
  });

  it('a name of exactly 64 characters is kept as it is', () => {
    const name = 'y'.repeat(64 - 'srv__'.length);
    expect(names([req('srv', name)])).toEqual([`srv__${name}`]);
  });

  it('two long names sharing their first 64 characters stay distinct', () => {
    const base = 'z'.repeat(70);
    const out = names([req('s', `${base}_one`), req('s', `${base}_two`)]);
    expect(out[0]).not.toBe(out[1]);
    expect(out.every((n) => n.length <= 64)).toBe(true);
  });

  it('never produces a collision when a prefix contains the separator', () => {
    const out = names([req('a__b', 'c'), req('a', 'b__c')]);
    expect(new Set(out).size).toBe(2);
    expect(out[0]).toBe('a__b__c');
  });

  it('stays within the characters hosts accept when a name equals the hashed form too', () => {
    // x's y__echo (prefixed, for its separator) is x__y__echo, which x__y's echo also is; so
    // that one is hashed. x__y also offers, by chance, that hashed form's tool, so the hash
    // is taken again.
    const hashed = names([req('x', 'y__echo', 'none'), req('x__y', 'echo')])[1];
    expect(hashed).toMatch(/^x__y__echo_[0-9a-f]{8}$/);
    const out = names([req('x', 'y__echo', 'none'), req('x__y', hashed.slice('x__y__'.length)), req('x__y', 'echo')]);
    expect(out.slice(0, 2)).toEqual(['x__y__echo', hashed]);
    expect(out[2]).toMatch(/^x__y__echo_[0-9a-f]{8}$/);
    expect(new Set(out).size).toBe(3);
    for (const name of out) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('prefixes a name with the separator in it in auto and none: bare, it would pass for another server\'s', () => {
    const out = names([req('github', 'create_issue', 'prefix'), req('evil', 'github__delete_repo', 'none'), req('evil', 'plain', 'auto')]);
    expect(out).toEqual(['github__create_issue', 'evil__github__delete_repo', 'plain']);
  });

  it('makes a name with characters the spec does not allow safe, hashed so that it meets no other', () => {
    const hostile = ['has space', 'line\nbreak', 'ctl\u0001x', 'zero\u200bwidth', 'crеate_issue', 'emoji🙂', 'has_space'];
    const out = names(hostile.map((n) => req('h', n)));
    expect(new Set(out).size).toBe(hostile.length);
    for (const name of out) expect(name).toMatch(/^[A-Za-z0-9_./-]{1,64}$/);
    expect(out[0]).toMatch(/^h__has_space_[0-9a-f]{8}$/);
    // The safe one keeps its name, even beside one that would look the same once made safe.
    expect(out[6]).toBe('h__has_space');
    // Bare too, in auto and none: a look-alike (a Cyrillic е) does not pass for create_issue.
    expect(names([req('a', 'create_issue', 'none'), req('h', 'crеate_issue', 'none')])).toEqual([
      'create_issue',
      expect.stringMatching(/^cr_ate_issue_[0-9a-f]{8}$/),
    ]);
    // The spec allows dots and slashes: they stay.
    expect(names([req('h', 'admin.tools/list')])).toEqual(['h__admin.tools/list']);
  });

  it('shortens very long server names in the prefix', () => {
    const [name] = names([req('a-very-long-server-name-that-goes-on-and-on', 'tool')]);
    expect(name.length).toBeLessThanOrEqual(64);
    expect(name.endsWith('__tool')).toBe(true);
  });
});
