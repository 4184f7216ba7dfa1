import { describe, expect, it } from 'vitest';
import { configInputSchema } from './config.schema.js';
import { closestKey, editDistance, knownKeysAt } from './config.suggest.js';

describe('knownKeysAt', () => {
  it('finds the keys of the object at a path through defaults, records and lists', () => {
    expect(knownKeysAt(configInputSchema, ['listen'])).toEqual(['host', 'port']);
    expect(knownKeysAt(configInputSchema, ['auth', 'jwt', 'claims'])).toEqual(['principal', 'roles', 'groups']);
    expect(knownKeysAt(configInputSchema, ['servers', 'any name', 'roots', 3])).toEqual(['uri', 'name']);
    expect(knownKeysAt(configInputSchema, [])).toContain('mcpServers');
  });

  it('finds none where the path leads to no object', () => {
    expect(knownKeysAt(configInputSchema, ['servers', 'a', 'env'])).toEqual([]);
    expect(knownKeysAt(configInputSchema, ['pageSize', 'x'])).toEqual([]);
    expect(knownKeysAt(configInputSchema, ['nothing'])).toEqual([]);
  });
});

describe('closestKey', () => {
  const top = knownKeysAt(configInputSchema, []);

  it('takes a swap of neighbours as one edit', () => {
    expect(editDistance('mdoe', 'mode')).toBe(1);
    expect(editDistance('prot', 'port')).toBe(1);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('suggests a key that differs only in case, or by up to two edits', () => {
    expect(closestKey('mcpservers', top)).toBe('mcpServers');
    expect(closestKey('PAGESIZE', top)).toBe('pageSize');
    expect(closestKey('timeout', top)).toBe('timeouts');
    expect(closestKey('seperator', top)).toBe('separator');
    expect(closestKey('datadir_', top)).toBe('dataDir');
  });

  it('suggests nothing for a key far from every known one, or a short key two edits away', () => {
    expect(closestKey('globalShortcut', top)).toBeUndefined();
    expect(closestKey('dev', ['env', 'cwd'])).toBeUndefined();
    expect(closestKey('anything', [])).toBeUndefined();
  });
});
