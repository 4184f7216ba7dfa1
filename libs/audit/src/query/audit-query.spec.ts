import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { entry, tempDatabase, writerFor } from '../../test-support/temp-db.js';
import { AuditQuery, InvalidCursorError, decodeCursor, encodeCursor } from './audit-query.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

const T0 = Date.UTC(2026, 10, 1);

async function sample(): Promise<AuditQuery> {
  const t = await tempDatabase();
  open.push(t.dataSource);
  const writer = writerFor(t.db);
  const rows = [
    entry({ at: T0, principal: 'alice', name: 'gh__search', originalName: 'search', upstream: 'gh' }),
    entry({ at: T0 + 1000, principal: 'alice', name: 'gh__search', originalName: 'search', upstream: 'gh', outcome: 'tool_error' }),
    entry({ at: T0 + 2000, principal: 'bob', name: 'gh__delete', originalName: 'delete', decision: 'denied', outcome: null, upstream: null }),
    entry({ at: T0 + 3000, principal: 'bob', method: 'resources/read', name: 'file:///x', originalName: 'file:///x', upstream: 'fs' }),
    entry({ at: T0 + 4000, principal: 'carol', name: 'fs__read', originalName: 'read', upstream: 'fs', outcome: 'error', errorCode: -32603 }),
  ];
  for (const r of rows) void writer.append(r);
  await writer.flush();
  return new AuditQuery(t.dataSource);
}

const names = (rows: { name: string | null }[]) => rows.map((r) => r.name);

describe('AuditQuery', () => {
  it('filters by time, principal, tool (public or original name), decision, method and upstream', async () => {
    const q = await sample();
    const page = async (filter: object) => (await q.page(filter, { limit: 100, order: 'asc' })).items;
    expect(names(await page({ since: T0 + 1000, until: T0 + 3000 }))).toEqual(['gh__search', 'gh__delete']);
    expect(names(await page({ principal: 'bob' }))).toEqual(['gh__delete', 'file:///x']);
    expect(names(await page({ tool: 'search' }))).toEqual(['gh__search', 'gh__search']);
    expect(names(await page({ tool: 'fs__read' }))).toEqual(['fs__read']);
    expect(names(await page({ decision: 'denied' }))).toEqual(['gh__delete']);
    expect(names(await page({ method: 'resources/read' }))).toEqual(['file:///x']);
    expect(names(await page({ upstream: 'fs' }))).toEqual(['file:///x', 'fs__read']);
  });

  it('pages with cursors, newest first by default, without repeats or gaps', async () => {
    const q = await sample();
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await q.page({}, { limit: 2, cursor });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([5, 4, 3, 2, 1]);
  });

  it('walks every row in chunks, oldest first', async () => {
    const q = await sample();
    const ids: number[] = [];
    for await (const row of q.rows({}, 'asc', 2)) ids.push(row.id);
    expect(ids).toEqual([1, 2, 3, 4, 5]);
  });

  it('counts calls, errors and denials per tool and per principal', async () => {
    const q = await sample();
    const stats = await q.stats({});
    expect(stats).toMatchObject({ rows: 5, calls: 4, errors: 2, denials: 1 });
    expect(stats.byTool).toEqual(
      expect.arrayContaining([
        { tool: 'gh__search', upstream: 'gh', calls: 2, errors: 1, denials: 0 },
        { tool: 'gh__delete', upstream: null, calls: 1, errors: 0, denials: 1 },
      ]),
    );
    expect(stats.byPrincipal.find((p) => p.principal === 'bob')).toEqual({ principal: 'bob', calls: 1, errors: 0, denials: 1 });
  });

  it('rejects a forged cursor', () => {
    expect(decodeCursor(encodeCursor(42))).toBe(42);
    expect(() => decodeCursor('bm9wZQ')).toThrow(InvalidCursorError);
  });
});
