import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '@switchboard/migrations';
import { migrate, openDatabase, sqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import { afterEach, describe, expect, it } from 'vitest';
import { PinGuard } from './pin-guard.js';
import { PinStore } from './pin-store.js';
import { PinWatch } from './pin-watch.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

async function realGuard() {
  const file = join(mkdtempSync(join(tmpdir(), 'sb-pins-')), 'switchboard.sqlite');
  const ds = await openDatabase({ file, entities: [], migrations: MIGRATIONS });
  await migrate(ds);
  open.push(ds);
  const store = new PinStore(sqliteConnection(ds));
  return { guard: new PinGuard(store, () => 'strict', () => undefined), store };
}

type Tool = Record<string, unknown>;

/** Records what the watch hands on, as PinGuard.observe would receive it. */
function recordingGuard() {
  const observed: string[] = [];
  return { observed, guard: { observe: (server: string, _tools: readonly Tool[]) => void observed.push(server) } };
}

describe('PinWatch', () => {
  it('judges a list once while the catalog holds it, and again only when it is new', () => {
    const { guard, observed } = recordingGuard();
    const watch = new PinWatch(guard, () => undefined);
    const tools = [{ name: 'search' }];
    watch.update([['gh', tools]]);
    watch.update([['gh', tools]]);
    watch.update([['gh', [...tools]]]);
    expect(observed).toEqual(['gh', 'gh']);
  });

  it('forgets the list of a server the catalog no longer holds (removed by a reload, or down)', async () => {
    const { guard, store } = await realGuard();
    const watch = new PinWatch(guard, () => undefined);
    for (let i = 0; i < 50; i++) watch.update([['kept', [{ name: 'a' }]], [`gone-${i}`, [{ name: 'b', description: 'x'.repeat(1000) }]]]);
    watch.update([['kept', [{ name: 'a' }]]]);
    expect(store.get('gone-49', 'b')).toBeDefined();
    expect(watch.rememberedServers).toBe(1);
    watch.update([]);
    expect(watch.rememberedServers).toBe(0);
  });

  it('judges a list whose check failed again at the next change, and reports the failure', () => {
    let failing = true;
    const observed: string[] = [];
    const errors: string[] = [];
    const watch = new PinWatch(
      {
        observe: (server) => {
          if (failing) throw new Error('database is locked');
          observed.push(server);
        },
      },
      (server, err) => errors.push(`${server}: ${(err as Error).message}`),
    );
    const tools = [{ name: 'search' }];
    watch.update([['gh', tools]]);
    failing = false;
    watch.update([['gh', tools]]);
    expect(errors).toEqual(['gh: database is locked']);
    expect(observed).toEqual(['gh']);
  });
});
