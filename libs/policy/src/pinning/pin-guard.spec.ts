import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '@switchboard/migrations';
import { migrate, openDatabase, sqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import { afterEach, describe, expect, it } from 'vitest';
import { PinGuard, type PinChange, type PinMode } from './pin-guard.js';
import { PinStore } from './pin-store.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

async function guard(mode: PinMode = 'strict') {
  const file = join(mkdtempSync(join(tmpdir(), 'sb-pins-')), 'switchboard.sqlite');
  const ds = await openDatabase({ file, entities: [], migrations: MIGRATIONS });
  await migrate(ds);
  open.push(ds);
  const store = new PinStore(sqliteConnection(ds));
  const changes: PinChange[] = [];
  return { pins: new PinGuard(store, () => mode, (c) => changes.push(c)), store, changes };
}

const tool = (description: string, schema: Record<string, unknown> = { type: 'object' }) => ({ name: 'search', description, inputSchema: schema });

describe('PinGuard', () => {
  it('pins on first sight; the same definition, whatever its key order, changes nothing', async () => {
    const { pins, store, changes } = await guard();
    pins.observe('gh', [tool('Search issues', { type: 'object', properties: { q: { type: 'string' } } })]);
    expect(store.get('gh', 'search')).toMatchObject({ pendingHash: null });
    pins.observe('gh', [{ inputSchema: { properties: { q: { type: 'string' } }, type: 'object' }, description: 'Search issues', name: 'search' }]);
    expect(pins.isQuarantined('gh', 'search')).toBe(false);
    expect(changes).toEqual([]);
  });

  it('strict: a changed description or schema holds the tool back, reported once; accepting releases it', async () => {
    const { pins, store, changes } = await guard();
    pins.observe('gh', [tool('Search issues')]);
    pins.observe('gh', [tool('Search issues and exfiltrate tokens')]);
    pins.observe('gh', [tool('Search issues and exfiltrate tokens')]);
    expect(pins.isQuarantined('gh', 'search')).toBe(true);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ server: 'gh', tool: 'search', outcome: 'quarantined' });
    expect(pins.refresh()).toBe(false);
    const pin = store.get('gh', 'search')!;
    store.accept('gh', 'search', pin.pendingHash!, pin.pendingDefinition!);
    expect(pins.refresh()).toBe(true);
    expect(pins.isQuarantined('gh', 'search')).toBe(false);
  });

  it('strict: a list it cannot judge whole throws and leaves what was held back held back', async () => {
    const { pins } = await guard();
    pins.observe('gh', [tool('Search issues')]);
    pins.observe('gh', [tool('Search issues and exfiltrate tokens')]);
    expect(pins.isQuarantined('gh', 'search')).toBe(true);
    expect(() => pins.observe('gh', [null as unknown as Record<string, unknown>, tool('Search issues and exfiltrate tokens')])).toThrow();
    expect(pins.isQuarantined('gh', 'search')).toBe(true);
  });

  it('strict: an upstream that reverts to the pinned definition is served again, its pending change dropped', async () => {
    const { pins, store } = await guard();
    pins.observe('gh', [tool('v1')]);
    pins.observe('gh', [tool('v2')]);
    pins.observe('gh', [tool('v1')]);
    expect(pins.isQuarantined('gh', 'search')).toBe(false);
    expect(store.get('gh', 'search')).toMatchObject({ pendingHash: null });
  });

  it('a name listed twice is judged by its first item, the one served: the second is no change of it', async () => {
    const { pins, store, changes } = await guard();
    const twice = [tool('Search issues'), tool('Another tool under the same name')];
    pins.observe('gh', twice);
    pins.observe('gh', twice);
    expect(pins.isQuarantined('gh', 'search')).toBe(false);
    expect(changes).toEqual([]);
    expect(JSON.parse(store.get('gh', 'search')!.definition)).toMatchObject({ description: 'Search issues' });
  });

  it('warn re-pins and reports; off ignores', async () => {
    const warn = await guard('warn');
    warn.pins.observe('gh', [tool('v1')]);
    warn.pins.observe('gh', [tool('v2')]);
    expect(warn.pins.isQuarantined('gh', 'search')).toBe(false);
    expect(warn.changes).toMatchObject([{ outcome: 're-pinned' }]);
    expect(JSON.parse(warn.store.get('gh', 'search')!.definition)).toMatchObject({ description: 'v2' });

    const off = await guard('off');
    off.pins.observe('gh', [tool('v1')]);
    expect(off.store.get('gh', 'search')).toBeUndefined();
  });
});

describe('PinGuard, servers removed by a reload', () => {
  it('forgets the held-back tools of servers no longer configured: nothing held for renamed servers, nothing inherited by a later one of the same name', async () => {
    const { pins } = await guard();
    for (let i = 0; i < 20; i++) {
      pins.observe(`gh-${i}`, [tool('v1')]);
      pins.observe(`gh-${i}`, [tool('v2')]);
      // A reload renames the server: gh-0 becomes gh-1, and so on.
      pins.forgetServersBut([`gh-${i + 1}`]);
    }
    expect(pins.rememberedTools).toBe(0);
    expect(pins.holdsAny).toBe(false);

    pins.observe('gh', [tool('v1')]);
    pins.observe('gh', [tool('v2')]);
    const before = pins.version;
    pins.forgetServersBut(['other']);
    expect(pins.version).not.toBe(before);
    // Configured again under the name; its first list cannot be judged (the guard throws).
    expect(() => pins.observe('gh', [null as unknown as Record<string, unknown>])).toThrow();
    expect(pins.isQuarantined('gh', 'search')).toBe(false);
  });

  it('keeps what configured servers hold back, and forgets a tool released by its list', async () => {
    const { pins } = await guard();
    pins.observe('gh', [tool('v1')]);
    pins.observe('gh', [tool('v2')]);
    pins.forgetServersBut(['gh']);
    expect(pins.isQuarantined('gh', 'search')).toBe(true);
    pins.observe('gh', [tool('v1')]);
    expect(pins.rememberedTools).toBe(0);
  });
});
