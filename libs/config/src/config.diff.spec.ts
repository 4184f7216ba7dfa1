import { describe, expect, it } from 'vitest';
import { deepEqual, diffServers, pinnedRootsChanged, sameConnection } from './config.diff.js';
import type { RemoteServerConfig, ServerConfig, StdioServerConfig } from './config.types.js';

const timeouts = { connectMs: 1, requestMs: 2, maxRequestMs: 3 };
const stdio = (name: string, extra: Partial<StdioServerConfig> = {}): StdioServerConfig => ({
  name,
  transport: 'stdio',
  command: 'node',
  args: ['a.js'],
  env: { A: '1' },
  timeouts,
  enabled: true,
  pin: 'strict',
  isolation: 'shared',
  ...extra,
});
const remote = (name: string, extra: Partial<RemoteServerConfig> = {}): RemoteServerConfig => ({
  name,
  transport: 'http',
  url: 'https://h/mcp',
  headers: {},
  timeouts,
  enabled: true,
  pin: 'strict',
  isolation: 'shared',
  ...extra,
});

describe('diffServers', () => {
  it('finds added, removed and changed servers by name', () => {
    const prev: ServerConfig[] = [stdio('keep'), stdio('gone'), remote('edit')];
    const next: ServerConfig[] = [remote('new'), remote('edit', { url: 'https://h/v2' }), stdio('keep')];
    expect(diffServers(prev, next)).toEqual({
      added: [next[0]],
      removed: [prev[1]],
      changed: [next[1]],
    });
  });

  it('sees changes deep inside a server', () => {
    const changes: Array<Partial<StdioServerConfig>> = [
      { args: ['b.js'] },
      { args: ['a.js', 'x'] },
      { env: { A: '2' } },
      { env: { A: '1', B: '1' } },
      { timeouts: { ...timeouts, requestMs: 5 } },
      { enabled: false },
      { alias: 'k' },
      { cwd: '/tmp' },
    ];
    for (const change of changes) {
      expect(diffServers([stdio('s')], [stdio('s', change)]).changed).toHaveLength(1);
    }
  });

  it('sees a change of transport under the same name', () => {
    expect(diffServers([stdio('s')], [remote('s')]).changed).toEqual([remote('s')]);
  });

  it('reports nothing for equal copies, whatever the key order', () => {
    const reordered = Object.fromEntries(Object.entries(stdio('s', { env: { A: '1', B: '2' } })).reverse()) as ServerConfig;
    const none = { added: [], removed: [], changed: [] };
    expect(diffServers([stdio('s', { env: { B: '2', A: '1' } })], [reordered])).toEqual(none);
    expect(diffServers([stdio('a'), remote('b')], [remote('b'), stdio('a')])).toEqual(none);
  });
});

describe('deepEqual', () => {
  it('treats a key set to undefined as absent', () => {
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: undefined })).toBe(true);
    expect(deepEqual({ a: 1, b: undefined }, { a: 1, c: 2 })).toBe(false);
  });

  it('distinguishes arrays from objects and compares order in arrays only', () => {
    expect(deepEqual([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual({ x: 1, y: 2 }, { y: 2, x: 1 })).toBe(true);
    expect(deepEqual(null, {})).toBe(false);
  });
});

describe('pinned roots', () => {
  const pinned = (uri: string) => stdio('s', { roots: [{ uri }] });

  it('change without restarting the server, and are reported for the connections to be told', () => {
    expect(diffServers([pinned('file:///a')], [pinned('file:///b')]).changed).toEqual([]);
    expect(pinnedRootsChanged([pinned('file:///a')], [pinned('file:///b')])).toEqual(['s']);
    expect(pinnedRootsChanged([pinned('file:///a')], [pinned('file:///a')])).toEqual([]);
  });

  it('restart the server when they are pinned or unpinned, which is not a change of the list', () => {
    expect(diffServers([stdio('s')], [pinned('file:///a')]).changed).toHaveLength(1);
    expect(diffServers([pinned('file:///a')], [stdio('s')]).changed).toHaveLength(1);
    expect(pinnedRootsChanged([stdio('s')], [pinned('file:///a')])).toEqual([]);
    expect(sameConnection(pinned('file:///a'), pinned('file:///b'))).toBe(true);
    expect(sameConnection(pinned('file:///a'), stdio('s', { roots: [{ uri: 'file:///a' }], args: [] }))).toBe(false);
  });
});
