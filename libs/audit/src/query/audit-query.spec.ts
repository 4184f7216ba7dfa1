import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DataSource } from 'typeorm';
import type { AuditEntry } from '../audit.types.js';
import { entry, tempDatabase, writerFor } from '../../test-support/temp-db.js';
import { AuditQuery, InvalidCursorError, decodeCursor, encodeCursor } from './audit-query.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

const T0 = Date.UTC(2026, 10, 1);

/** A query over a fresh database that holds these rows. */
async function queryOf(rows: AuditEntry[]): Promise<AuditQuery> {
  const t = await tempDatabase();
  open.push(t.dataSource);
  const writer = writerFor(t.db);
  for (const r of rows) void writer.append(r);
  await writer.flush();
  return new AuditQuery(t.dataSource);
}

function sample(): Promise<AuditQuery> {
  return queryOf([
    entry({ at: T0, principal: 'alice', name: 'gh__search', originalName: 'search', upstream: 'gh' }),
    entry({ at: T0 + 1000, principal: 'alice', name: 'gh__search', originalName: 'search', upstream: 'gh', outcome: 'tool_error' }),
    entry({ at: T0 + 2000, principal: 'bob', name: 'gh__delete', originalName: 'delete', decision: 'denied', outcome: null, upstream: null }),
    entry({ at: T0 + 3000, principal: 'bob', method: 'resources/read', name: 'file:///x', originalName: 'file:///x', upstream: 'fs' }),
    entry({ at: T0 + 4000, principal: 'carol', name: 'fs__read', originalName: 'read', upstream: 'fs', outcome: 'error', errorCode: -32603 }),
  ]);
}

const names = (rows: { name: string | null }[]) => rows.map((r) => r.name);
/** The names of the rows a principal filter picks, oldest first. */
const namesFor = async (q: AuditQuery, principal: string) => names((await q.page({ principal }, { limit: 100, order: 'asc' })).items);

/** The SQL each query sends from now on, as TypeORM's logger sees it, to check what a page lets SQLite read. */
function recordQueries(dataSource: DataSource): { sql: string; params: unknown[] }[] {
  const queries: { sql: string; params: unknown[] }[] = [];
  (dataSource as unknown as { logger: object }).logger = {
    logQuery: (sql: string, params: unknown[] = []) => queries.push({ sql, params }),
    logQueryError: () => undefined,
    logQuerySlow: () => undefined,
    logSchemaBuild: () => undefined,
    logMigration: () => undefined,
    log: () => undefined,
  };
  return queries;
}

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

  it('a principal filter with a caller kind (jwt:alice, key:alice) picks that caller; a bare name finds every kind; stats keep them apart', async () => {
    const q = await queryOf([
      entry({ principal: 'alice', authMethod: 'api-key', name: 'by_key' }),
      entry({ principal: 'alice', authMethod: 'jwt', name: 'by_token' }),
      entry({ principal: 'anonymous', authMethod: 'loopback', name: 'local' }),
    ]);
    const page = (principal: string) => namesFor(q, principal);
    expect(await page('alice')).toEqual(['by_key', 'by_token']);
    expect(await page('jwt:alice')).toEqual(['by_token']);
    expect(await page('key:alice')).toEqual(['by_key']);
    expect(await page('loopback:anonymous')).toEqual(['local']);
    expect((await q.stats({})).byPrincipal.map((p) => p.principal).sort()).toEqual(['alice', 'jwt:alice', 'loopback:anonymous']);
  });

  it('a principal filter takes every caller name audit tail prints: none:anonymous (refused before anyone was identified) and internal:switchboard (its own rows) too', async () => {
    const q = await queryOf([
      entry({ principal: 'anonymous', authMethod: 'none', name: 'refused' }),
      entry({ principal: 'anonymous', authMethod: 'loopback', name: 'local' }),
      entry({ principal: 'switchboard', authMethod: 'internal', name: 'pruned' }),
    ]);
    const page = (principal: string) => namesFor(q, principal);
    expect(await page('none:anonymous')).toEqual(['refused']);
    expect(await page('internal:switchboard')).toEqual(['pruned']);
    expect(await page('anonymous')).toEqual(['refused', 'local']);
  });

  it('a principal filter matches names as the policy and the rate limits do: without regard to case or composition', async () => {
    const q = await queryOf([
      entry({ principal: 'frank', authMethod: 'api-key', name: 'lower' }),
      entry({ principal: 'Frank', authMethod: 'api-key', name: 'upper' }),
      entry({ principal: 'FRANK', authMethod: 'jwt', name: 'token' }),
      entry({ principal: 'frankie', authMethod: 'api-key', name: 'other' }),
      entry({ principal: 'Jos\u00e9', authMethod: 'jwt', name: 'composed' }),
      entry({ principal: 'jose\u0301', authMethod: 'jwt', name: 'decomposed' }),
      entry({ principal: 'zed', authMethod: 'api-key', name: 'last' }),
    ]);
    const page = (principal: string) => namesFor(q, principal);
    expect(await page('frank')).toEqual(['lower', 'upper', 'token']);
    expect(await page('FRANK')).toEqual(['lower', 'upper', 'token']);
    expect(await page('key:frank')).toEqual(['lower', 'upper']);
    expect(await page('jwt:frank')).toEqual(['token']);
    expect(await page('jwt:JOSÉ')).toEqual(['composed', 'decomposed']);
    expect(await page('nobody')).toEqual([]);
    // The rows keep each name as it arrived.
    expect((await q.page({ principal: 'frank' }, { limit: 10, order: 'asc' })).items.map((r) => r.principal)).toEqual(['frank', 'Frank', 'FRANK']);
    expect((await q.stats({ principal: 'frank' })).byDecision.allowed).toBe(3);
    // Paged across the spellings, newest first: no repeats, no gaps.
    const first = await q.page({ principal: 'Frank' }, { limit: 1, order: 'desc' });
    const rest = await q.page({ principal: 'Frank' }, { limit: 5, order: 'desc', cursor: first.nextCursor });
    expect([...names(first.items), ...names(rest.items)]).toEqual(['token', 'upper', 'lower']);
  });

  it('a principal filter takes the method as rows name it, too: api-key:alice is key:alice', async () => {
    const q = await queryOf([
      entry({ principal: 'alice', authMethod: 'api-key', name: 'by_key' }),
      entry({ principal: 'alice', authMethod: 'jwt', name: 'by_token' }),
    ]);
    expect(await namesFor(q, 'api-key:alice')).toEqual(['by_key']);
  });

  it('names the filters no row of the log matches, with the value most likely meant, for a reader that found nothing', async () => {
    const q = await sample();
    expect(await q.unmatchedFilters({ method: 'tools/calls', upstream: 'GH', tool: 'gh__serch', principal: 'alise' })).toEqual([
      "no row has principal 'alise' (did you mean alice?)",
      "no tools/call row has tool 'gh__serch' (did you mean gh__search?)",
      "no row has method 'tools/calls' (did you mean tools/call?)",
      "no row has upstream 'GH' (did you mean gh?)",
    ]);
    expect(await q.unmatchedFilters({ method: 'nothing/like/it', principal: 'zz' })).toEqual([
      "no row has principal 'zz'",
      "no row has method 'nothing/like/it'",
    ]);
    // Each of these matches rows, only not together: nothing to name.
    expect(await q.unmatchedFilters({ principal: 'carol', tool: 'search', method: 'tools/call', upstream: 'gh' })).toEqual([]);
    expect(await q.unmatchedFilters({ principal: 'key:ALICE', decision: 'refused' })).toEqual([]);
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

  it('ends an oldest-first read with a resume cursor that later gives only the rows committed since, as an importer polls', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db);
    const q = new AuditQuery(t.dataSource);
    const append = async (...principals: string[]) => {
      for (const principal of principals) void writer.append(entry({ principal }));
      await writer.flush();
    };
    const readAll = async (from: string | undefined, filter = {}) => {
      const seen: string[] = [];
      let cursor = from;
      for (;;) {
        const page = await q.page(filter, { limit: 2, cursor, order: 'asc' });
        seen.push(...page.items.map((r) => r.principal));
        if (!page.nextCursor) return { seen, resume: page.resumeCursor };
        cursor = page.nextCursor;
      }
    };
    // An empty log already gives a place to poll from.
    const empty = await readAll(undefined);
    expect(empty).toMatchObject({ seen: [] });
    await append('a', 'b', 'c');
    const first = await readAll(empty.resume);
    expect(first.seen).toEqual(['a', 'b', 'c']);
    // Nothing new: the same place again, not the start.
    const idle = await readAll(first.resume);
    expect(idle.seen).toEqual([]);
    await append('d', 'e');
    expect((await readAll(idle.resume)).seen).toEqual(['d', 'e']);
    // A filter that matched nothing still moves the place on past the rows it read.
    const bobs = await readAll(undefined, { principal: 'bob' });
    expect(bobs.seen).toEqual([]);
    await append('bob');
    expect((await readAll(bobs.resume, { principal: 'bob' })).seen).toEqual(['bob']);
    // Newest first, or with an end time, a read has an end and nothing to resume.
    expect((await q.page({}, { limit: 100, order: 'desc' })).resumeCursor).toBeUndefined();
    expect((await q.page({ until: Date.now() + 60_000 }, { limit: 100, order: 'asc' })).resumeCursor).toBeUndefined();
  });

  it('walks every row in chunks, oldest first', async () => {
    const q = await sample();
    const ids: number[] = [];
    for await (const row of q.rows({}, 'asc', 2)) ids.push(row.id);
    expect(ids).toEqual([1, 2, 3, 4, 5]);
  });

  it('gives the newest rows oldest first, a chunk at a time however many are asked for', async () => {
    const q = await sample();
    const pages = vi.spyOn(q, 'page');
    const ids = async (rows: AsyncIterable<{ id: number }>) => {
      const seen: number[] = [];
      for await (const row of rows) seen.push(row.id);
      return seen;
    };
    expect(await ids(q.last({}, 3, 2))).toEqual([3, 4, 5]);
    expect(await ids(q.last({ principal: 'bob' }, 1, 2))).toEqual([4]);
    // Fewer matching rows than asked for: all of them.
    expect(await ids(q.last({ principal: 'alice' }, 100, 2))).toEqual([1, 2]);
    expect(pages.mock.calls.every(([, options]) => options.limit <= 2)).toBe(true);
  });

  it('counts calls, errors and denials per tool and per principal over tool calls, and every row per decision and method', async () => {
    const q = await sample();
    const stats = await q.stats({});
    expect(stats).toEqual({
      rows: 5,
      byDecision: { allowed: 4, denied: 1, limited: 0, unauthenticated: 0, refused: 0 },
      calls: 4,
      errors: 2,
      cancelled: 0,
      denials: 1,
      byTool: [
        { tool: 'gh__search', upstream: 'gh', calls: 2, errors: 1, denials: 0 },
        { tool: 'fs__read', upstream: 'fs', calls: 1, errors: 1, denials: 0 },
        { tool: 'gh__delete', upstream: null, calls: 1, errors: 0, denials: 1 },
      ],
      byPrincipal: [
        { principal: 'alice', calls: 2, errors: 1, denials: 0 },
        { principal: 'bob', calls: 1, errors: 0, denials: 1 },
        { principal: 'carol', calls: 1, errors: 1, denials: 0 },
      ],
      byMethod: [
        { method: 'tools/call', rows: 4, errors: 2, denials: 1 },
        { method: 'resources/read', rows: 1, errors: 0, denials: 0 },
      ],
    });
  });

  it('stats: HTTP refusals, reads and prompts stay out of the tool and principal lines; a denied call stays on its tool line; a cancelled call is no error', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db);
    const anon = { principal: 'anonymous', authMethod: 'loopback', name: 'probe__echo', originalName: 'echo', upstream: 'probe' };
    const http = (decision: 'refused' | 'unauthenticated') =>
      entry({ ...anon, method: 'http', name: 'POST /mcp', originalName: null, upstream: null, decision, outcome: null, arguments: null });
    const rows = [
      entry(anon),
      entry(anon),
      entry({ ...anon, outcome: 'tool_error' }),
      // The host cancelled it: counted on its own, not as an error.
      entry({ ...anon, outcome: 'cancelled' }),
      // Refused before routing: no upstream, same tool.
      entry({ ...anon, upstream: null, decision: 'denied', rule: 'policy:default-deny', outcome: null }),
      entry({ ...anon, decision: 'limited', rule: 'limit:principal', outcome: null }),
      http('refused'),
      http('refused'),
      http('unauthenticated'),
      http('unauthenticated'),
      entry({ ...anon, method: 'resources/read', name: 'probe://x', originalName: 'probe://x', outcome: 'error' }),
      entry({ ...anon, method: 'prompts/get', name: 'probe__greet', originalName: 'greet' }),
    ];
    for (const r of rows) void writer.append(r);
    await writer.flush();
    const q = new AuditQuery(t.dataSource);

    const stats = await q.stats({});
    expect(stats.rows).toBe(12);
    expect(stats.byDecision).toEqual({ allowed: 6, denied: 1, limited: 1, unauthenticated: 2, refused: 2 });
    expect(stats).toMatchObject({ calls: 6, errors: 1, cancelled: 1, denials: 2 });
    expect(stats.byTool).toEqual([{ tool: 'probe__echo', upstream: 'probe', calls: 6, errors: 1, denials: 2 }]);
    expect(stats.byPrincipal).toEqual([{ principal: 'loopback:anonymous', calls: 6, errors: 1, denials: 2 }]);
    expect(stats.byMethod).toEqual([
      { method: 'tools/call', rows: 6, errors: 1, denials: 2 },
      { method: 'http', rows: 4, errors: 0, denials: 4 },
      { method: 'prompts/get', rows: 1, errors: 0, denials: 0 },
      { method: 'resources/read', rows: 1, errors: 1, denials: 0 },
    ]);

    // A method filter narrows every part; it is not replaced by tools/call for the tables.
    const reads = await q.stats({ method: 'resources/read' });
    expect(reads).toMatchObject({ rows: 1, calls: 0, errors: 0, cancelled: 0, denials: 0, byTool: [], byPrincipal: [] });
    expect(reads.byMethod).toEqual([{ method: 'resources/read', rows: 1, errors: 1, denials: 0 }]);
  });

  it('stats: a tool whose calls went to several upstreams is one line listing them', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db);
    for (const upstream of ['b', 'a', null, 'b']) void writer.append(entry({ name: 'moved__tool', upstream }));
    // A call that named no tool (no `name`, or not a string) is a line of its own, named null.
    void writer.append(entry({ name: null, originalName: null, upstream: null, decision: 'denied' }));
    await writer.flush();
    expect((await new AuditQuery(t.dataSource).stats({})).byTool).toEqual([
      { tool: 'moved__tool', upstream: 'a,b', calls: 4, errors: 0, denials: 0 },
      { tool: null, upstream: null, calls: 1, errors: 0, denials: 1 },
    ]);
  });

  it('with scanRows, a filter no index serves reads that many ids a page, and its cursors still reach every match once', async () => {
    const q = await sample();
    const walk = async (order: 'asc' | 'desc') => {
      const pages: number[][] = [];
      let cursor: string | undefined;
      do {
        const page = await q.page({ tool: 'search' }, { limit: 10, cursor, order, scanRows: 2 });
        pages.push(page.items.map((r) => r.id));
        cursor = page.nextCursor;
      } while (cursor);
      return pages;
    };
    // Rows 1 and 2 match; ids 3-5 do not. Pages of 2 ids each, the last one shorter.
    expect(await walk('asc')).toEqual([[1, 2], [], []]);
    expect(await walk('desc')).toEqual([[], [2], [1]]);
    // Within a time range the window is the range's own ids, as the time index has them.
    const inRange: number[][] = [];
    let cursor: string | undefined;
    do {
      const page = await q.page({ since: T0, until: T0 + 2000 }, { limit: 10, cursor, order: 'desc', scanRows: 2 });
      inRange.push(page.items.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(inRange).toEqual([[2, 1]]);
    // Principal is indexed: no window, the page is whole.
    expect((await q.page({ principal: 'alice' }, { limit: 10, scanRows: 1 })).items).toHaveLength(2);
  });

  it('with scanRows, a time bound reads only the ids of its range, not every row outside it', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db);
    for (let i = 0; i < 200; i++) void writer.append(entry({ at: T0 + i * 1000, requestId: `r${i}` }));
    await writer.flush();
    // A row that arrived early but was committed last (a crashed process's journal, moved in later).
    void writer.append(entry({ at: T0 + 500, requestId: 'late' }));
    await writer.flush();
    const queries = recordQueries(t.dataSource);
    const q = new AuditQuery(t.dataSource);
    /** Every page of a walk, and the ids each page's query let SQLite read. */
    const walk = async (filter: { since?: number; until?: number }, order: 'asc' | 'desc') => {
      const ids: number[] = [];
      const spans: number[] = [];
      let cursor: string | undefined;
      do {
        queries.length = 0;
        const page = await q.page(filter, { limit: 50, cursor, order, scanRows: 20 });
        ids.push(...page.items.map((r) => r.id));
        // The ids the page query may read: its id bounds (none: every id).
        const read = queries.find((query) => query.sql.includes('ORDER BY'));
        const bounds = read && /"r"\."id" > (\d+) AND "r"\."id" < (\d+)/.exec(read.sql);
        spans.push(read === undefined ? 0 : bounds ? Number(bounds[2]) - Number(bounds[1]) - 1 : Infinity);
        cursor = page.nextCursor;
      } while (cursor);
      return { ids, widest: Math.max(...spans) };
    };
    // The last five rows, newest first: what "since an hour ago" asks for.
    expect(await walk({ since: T0 + 195_000 }, 'desc')).toEqual({ ids: [200, 199, 198, 197, 196], widest: 5 });
    // Oldest first from a time, and newest first up to one: the rows outside are not read.
    expect(await walk({ since: T0 + 190_000 }, 'asc')).toEqual({ ids: [191, 192, 193, 194, 195, 196, 197, 198, 199, 200], widest: 10 });
    expect(await walk({ until: T0 + 3_000 }, 'desc')).toEqual({ ids: [201, 3, 2, 1], widest: 20 });
    // None in the range: one empty page, nothing read.
    expect(await walk({ since: T0 + 999_000 }, 'desc')).toEqual({ ids: [], widest: 0 });
    // More rows in the range than a page may read: windows, and still every row once.
    const all = await walk({ since: T0 }, 'desc');
    expect(all.ids).toEqual(Array.from({ length: 201 }, (_, i) => 201 - i));
    expect(all.widest).toBeLessThanOrEqual(20);
  });

  it('pages newest first within a time range without sorting the whole range for each page', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const queries = recordQueries(t.dataSource);
    await new AuditQuery(t.dataSource).page({ since: T0, until: T0 + 1000 }, { limit: 10, order: 'desc' });
    const page = queries.find((q) => q.sql.includes('ORDER BY'))!;
    const plan = t.db.prepare(`EXPLAIN QUERY PLAN ${page.sql}`).all(...page.params) as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
  });

  it('pages one principal newest first without sorting all of its rows for each page', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const plan = t.db.prepare(`EXPLAIN QUERY PLAN SELECT id FROM audit_record WHERE principal = ? ORDER BY id DESC LIMIT 101`).all('alice') as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
  });

  it('rejects a forged cursor', () => {
    const filter = { tool: 'gh__search' };
    expect(decodeCursor(encodeCursor(42, filter, 'desc'), filter, 'desc')).toBe(42);
    expect(() => decodeCursor('bm9wZQ', filter, 'desc')).toThrow(InvalidCursorError);
    // Texts Node's base64 decoder would read as a cursor: padding, stray characters, a leading zero.
    const good = encodeCursor(123, filter, 'desc');
    const zero = Buffer.from(Buffer.from(good, 'base64url').toString().replace('id:123', 'id:0123')).toString('base64url');
    for (const forged of [`${good}==`, `${good}!!`, `${good.slice(0, 3)} ${good.slice(3)}`, zero]) {
      expect(() => decodeCursor(forged, filter, 'desc'), forged).toThrow(expect.objectContaining({ reason: 'malformed' }));
    }
  });

  it('binds a cursor to the filters and order it was made for', async () => {
    const q = await sample();
    const first = await q.page({ principal: 'alice' }, { limit: 1 });
    expect(first.nextCursor).toBeDefined();
    // Without its filter the cursor would page on through every row: refused instead.
    for (const [filter, order] of [[{}, 'desc'], [{ principal: 'bob' }, 'desc'], [{ principal: 'alice' }, 'asc']] as const) {
      await expect(q.page(filter, { limit: 1, cursor: first.nextCursor, order })).rejects.toMatchObject({ reason: 'other-query' });
    }
    // Paging ids are not part of what was asked.
    await expect(q.page({ principal: 'alice', afterId: 0 }, { limit: 1, cursor: first.nextCursor })).resolves.toBeDefined();
  });
});
