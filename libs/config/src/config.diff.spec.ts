import { describe, expect, it } from 'vitest';
import { deepEqual, diffServers, pinnedRootsChanged, restartNeeded, sameConnection } from './config.diff.js';
import { secretMarker } from './config.secrets.js';
import type { RemoteServerConfig, ServerConfig, StdioServerConfig } from './config.types.js';

const timeouts = { connectMs: 1, requestMs: 2, maxRequestMs: 3 };
const lists = { maxItems: 10, maxBytes: 4096 };
const stdio = (name: string, extra: Partial<StdioServerConfig> = {}): StdioServerConfig => ({
  name,
  transport: 'stdio',
  command: 'node',
  args: ['a.js'],
  env: { A: '1' },
  timeouts,
  lists,
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
  lists,
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
      updated: [],
    });
  });

  it('restarts for a change deep inside what the connection is made from', () => {
    const changes: Array<Partial<StdioServerConfig>> = [
      { command: 'deno' },
      { args: ['b.js'] },
      { args: ['a.js', 'x'] },
      { env: { A: '2' } },
      { env: { A: '1', B: '1' } },
      // A secret reference (`${secret:TOKEN}`) is part of the value.
      { env: { A: secretMarker('TOKEN') } },
      { enabled: false },
      { cwd: '/tmp' },
      { isolation: 'per-session' },
    ];
    for (const change of changes) {
      expect(diffServers([stdio('s')], [stdio('s', change)])).toMatchObject({ changed: [stdio('s', change)], updated: [] });
      expect(restartNeeded(stdio('s'), stdio('s', change))).toBe(true);
    }
    const remoteChanges: Array<Partial<RemoteServerConfig>> = [
      { url: 'https://h/v2' },
      { headers: { Authorization: 'Bearer x' } },
      { transport: 'sse' },
    ];
    for (const change of remoteChanges) expect(restartNeeded(remote('s'), remote('s', change))).toBe(true);
  });

  it('updates in place, without a restart, a change of what is read at use time', () => {
    const changes: Array<Partial<StdioServerConfig>> = [
      { alias: 'k' },
      { namespace: 'none' },
      { pin: 'warn' },
      { pin: 'off' },
      { timeouts: { ...timeouts, requestMs: 5 } },
      { timeouts: { ...timeouts, connectMs: 5 } },
      { timeouts: { ...timeouts, maxRequestMs: 5 } },
      { lists: { ...lists, maxItems: 5 } },
      { lists: { ...lists, maxBytes: 8192 } },
      { alias: 'k', pin: 'warn', timeouts: { connectMs: 9, requestMs: 9, maxRequestMs: 9 } },
    ];
    for (const change of changes) {
      const next = stdio('s', change);
      expect(diffServers([stdio('s')], [next])).toEqual({ added: [], removed: [], changed: [], updated: [next] });
      expect(restartNeeded(stdio('s'), next)).toBe(false);
    }
    expect(diffServers([remote('s')], [remote('s', { alias: 'r' })]).updated).toHaveLength(1);
  });

  it('keeps sameConnection exact (the per-principal and per-session pools replace on any change)', () => {
    expect(sameConnection(stdio('s'), stdio('s', { alias: 'k' }))).toBe(false);
    expect(sameConnection(stdio('s'), stdio('s', { timeouts: { ...timeouts, requestMs: 5 } }))).toBe(false);
    expect(sameConnection(stdio('s'), stdio('s'))).toBe(true);
  });

  it('sees a change of transport under the same name', () => {
    expect(diffServers([stdio('s')], [remote('s')]).changed).toEqual([remote('s')]);
  });

  it('reports nothing for equal copies, whatever the key order', () => {
    const reordered = Object.fromEntries(Object.entries(stdio('s', { env: { A: '1', B: '2' } })).reverse()) as ServerConfig;
    const none = { added: [], removed: [], changed: [], updated: [] };
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
    expect(diffServers([pinned('file:///a')], [pinned('file:///b')])).toMatchObject({ changed: [], updated: [pinned('file:///b')] });
    expect(restartNeeded(pinned('file:///a'), pinned('file:///b'))).toBe(false);
    expect(pinnedRootsChanged([pinned('file:///a')], [pinned('file:///b')])).toEqual(['s']);
    expect(pinnedRootsChanged([pinned('file:///a')], [pinned('file:///a')])).toEqual([]);
  });

  it('restart the server when they are pinned or unpinned, which is not a change of the list', () => {
    expect(diffServers([stdio('s')], [pinned('file:///a')]).changed).toHaveLength(1);
    expect(diffServers([pinned('file:///a')], [stdio('s')]).changed).toHaveLength(1);
    expect(pinnedRootsChanged([stdio('s')], [pinned('file:///a')])).toEqual([]);
    expect(sameConnection(pinned('file:///a'), pinned('file:///b'))).toBe(true);
    expect(sameConnection(pinned('file:///a'), stdio('s', { roots: [{ uri: 'file:///a' }], args: [] }))).toBe(false);
    expect(restartNeeded(stdio('s'), pinned('file:///a'))).toBe(true);
    expect(restartNeeded(pinned('file:///a'), stdio('s'))).toBe(true);
  });
});
