import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, stdioFixture, stopAllDaemons, type DaemonHandle } from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';

/** GET /admin/api/audit on the real daemon, after real tool calls through a real SDK host. */

type Item = Record<string, unknown> & { id: number };
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

afterAll(stopAllDaemons);

describe('admin API: GET /admin/api/audit', () => {
  let daemon: DaemonHandle;
  let host: Host;

  beforeAll(async () => {
    daemon = await startDaemon({ mcpServers: { fx: stdioFixture() } });
    host = await connectHost('streamable-http', { daemon });
  });
  afterAll(async () => {
    await host?.close();
  });

  const api = () => request(daemon.baseUrl);

  it('returns the row of a tool call just made, with an ISO time, never cached', async () => {
    await host.client.callTool({ name: 'fx__echo', arguments: { text: 'seen by the admin api' } });
    const res = await api().get('/admin/api/audit').query({ tool: 'fx__echo' }).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.nextCursor).toBeUndefined();
    expect(res.body.items).toHaveLength(1);
    const [row] = res.body.items as Item[];
    expect(row).toMatchObject({
      principal: 'anonymous',
      authMethod: 'loopback',
      method: 'tools/call',
      name: 'fx__echo',
      originalName: 'echo',
      upstream: 'fx',
      arguments: '{"text":"seen by the admin api"}',
      argumentsTruncated: false,
      decision: 'allowed',
      outcome: 'ok',
    });
    expect(row.time).toMatch(ISO_TIME);
    expect(Date.parse(row.time as string)).toBe(row.at);
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('pages through every row with the cursor, newest first by default', async () => {
    for (let i = 0; i < 6; i++) await host.client.callTool({ name: 'fx__add', arguments: { a: i, b: 1 } });
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api()
        .get('/admin/api/audit')
        .query({ tool: 'fx__add', limit: 4, ...(cursor ? { cursor } : {}) })
        .expect(200);
      seen.push(...(res.body.items as Item[]).map((r) => r.id));
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(2);
    expect(seen).toHaveLength(6);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);

    // A cursor sent without the filters it was made for is refused, not paged on unfiltered.
    const first = await api().get('/admin/api/audit').query({ tool: 'fx__add', limit: 4 }).expect(200);
    const alone = await api().get('/admin/api/audit').query({ cursor: first.body.nextCursor, limit: 4 }).expect(400);
    expect(JSON.stringify(alone.body)).toContain('was returned for other filters or another order: send the same ones with it');

    const asc = await api().get('/admin/api/audit').query({ tool: 'fx__add', order: 'asc', limit: 1000 }).expect(200);
    expect((asc.body.items as Item[]).map((r) => r.id)).toEqual([...seen].reverse());
    const args = (asc.body.items as Item[]).map((r) => JSON.parse(r.arguments as string).a);
    expect(args).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('filters by decision and time', async () => {
    await expect(host.client.callTool({ name: 'fx__nope', arguments: {} })).rejects.toThrow();
    const denied = await api().get('/admin/api/audit').query({ decision: 'denied' }).expect(200);
    expect((denied.body.items as Item[]).map((r) => r.name)).toEqual(['fx__nope']);
    const future = await api().get('/admin/api/audit').query({ since: String(Date.now() + 60_000) }).expect(200);
    expect(future.body.items).toEqual([]);
  });

  it('answers 400 listing every bad parameter', async () => {
    const res = await api()
      .get('/admin/api/audit')
      .query({ limit: '5000', decision: 'maybe', since: 'yesterday', cursor: 'nonsense', order: 'up', princpal: 'x' })
      .expect(400);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.error.message).toMatch(/invalid query parameters/);
    const params = (res.body.error.problems as { param: string }[]).map((p) => p.param).sort();
    expect(params).toEqual(['cursor', 'decision', 'limit', 'order', 'princpal', 'since']);
  });

  it('refuses a misspelt filter with 400 naming it, the parameters it takes and the one meant', async () => {
    // A filter silently dropped would answer with the whole log, which reads like the filtered answer.
    const res = await api().get('/admin/api/audit').query({ principle: 'key:frank', tools: 'echo', colour: 'red' }).expect(400);
    expect(res.body.error.message).toBe('invalid query parameters: unknown principle, tools, colour');
    const problems = Object.fromEntries((res.body.error.problems as { param: string; message: string }[]).map((p) => [p.param, p.message]));
    const known = 'known: since, until, decision, limit, cursor, order, principal, tool, method, upstream, session';
    expect(problems).toEqual({
      principle: `unknown parameter (did you mean 'principal'?); ${known}`,
      tools: `unknown parameter (did you mean 'tool'?); ${known}`,
      colour: `unknown parameter; ${known}`,
    });
  });

  it('refuses parameters on the inbox API, which takes none, rather than ignore them', async () => {
    await api().get('/admin/inbox/items').expect(200);
    const items = await api().get('/admin/inbox/items').query({ principal: 'key:frank' }).expect(400);
    expect(items.body.error).toEqual({
      message: 'invalid query parameters: unknown principal',
      problems: [{ param: 'principal', message: 'unknown parameter; /admin/inbox/items takes none' }],
    });
    const events = await api().get('/admin/inbox/events').query({ viewer: 'x' }).set('Accept', 'text/event-stream').expect(400);
    expect(events.body.error.message).toBe('invalid query parameters: unknown viewer');
  });

  it('refuses a foreign Host or Origin with 403 (DNS rebinding), on every /admin path', async () => {
    const rebound = await api().get('/admin/api/audit').set('Host', 'evil.example').expect(403);
    expect(rebound.body.error.message).toMatch(/Host 'evil.example' is not allowed/);
    expect(JSON.stringify(rebound.body)).not.toContain('fx__echo');
    const origin = await api().get('/admin/api/audit').set('Origin', 'https://evil.example').expect(403);
    expect(origin.body.error.message).toMatch(/Origin/);
    await api().get('/admin/api/other').set('Host', 'evil.example').expect(403);
    await api().get('/admin').set('Host', 'evil.example').expect(403);
  });
});

describe('admin API over a rewritten audit_record view', () => {
  it('still answers, with a warning that the rows shown may not be the chained ones', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture() } });
    const host = await connectHost('streamable-http', { daemon });
    try {
      await host.client.callTool({ name: 'fx__echo', arguments: { text: 'x' } });
      const before = await request(daemon.baseUrl).get('/admin/api/audit').expect(200);
      expect(before.body.warning).toBeUndefined();
      expect(before.body.items[0]).toMatchObject({ name: 'fx__echo', decision: 'allowed' });

      const db = new Database(join(dirname(daemon.configPath), 'data', 'switchboard.sqlite'));
      const view = (db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'audit_record'`).get() as { sql: string }).sql;
      db.exec('DROP VIEW audit_record');
      db.exec(view.replace(`json_extract(record, '$[16]') AS decision`, `'denied' AS decision`));
      db.close();

      const after = await request(daemon.baseUrl).get('/admin/api/audit').expect(200);
      expect(after.body.items[0]).toMatchObject({ name: 'fx__echo', decision: 'denied' });
      expect(after.body.warning).toMatch(/^the audit_record view, .* run switchboard audit verify$/);
    } finally {
      await host.close();
      await daemon.stop();
    }
  });
});

describe('admin API with the audit log disabled', () => {
  it('answers 404 saying so', async () => {
    const daemon = await startDaemon({ mcpServers: {}, audit: { enabled: false } });
    const res = await request(daemon.baseUrl).get('/admin/api/audit').expect(404);
    expect(res.body.error.message).toMatch(/audit log is disabled/);
    await daemon.stop();
  });
});
