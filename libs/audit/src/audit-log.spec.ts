import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DataSource } from 'typeorm';
import { entry, tempDatabase, writerFor } from '../test-support/temp-db.js';
import { AuditLog } from './audit-log.js';
import { argumentsDigest, createRedactor } from './redaction/index.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

async function log(maxArgumentBytes = 200, completions = true) {
  const t = await tempDatabase();
  open.push(t.dataSource);
  const audit = new AuditLog(writerFor(t.db), { redactor: createRedactor(), maxArgumentBytes, completions });
  const last = () => t.db.prepare('SELECT * FROM audit_record ORDER BY id DESC LIMIT 1').get() as Record<string, unknown>;
  return { audit, last };
}


describe('AuditLog', () => {
  it('writes redacted arguments and a digest of the unredacted ones', async () => {
    const { audit, last } = await log();
    const args = { query: 'select 1', password: 'hunter2hunter2' };
    await audit.record(entry(), args, null);
    const row = last();
    expect(row.arguments).toBe('{"password":"[REDACTED]","query":"select 1"}');
    expect(row.arguments_digest).toBe(argumentsDigest(args));
    expect(row.arguments_truncated).toBe(0);
  });

  it('cuts long arguments at a UTF-8 boundary within the cap and marks them', async () => {
    const { audit, last } = await log(100);
    await audit.record(entry(), { text: '€'.repeat(500) }, null);
    const row = last();
    expect(row.arguments_truncated).toBe(1);
    expect(Buffer.byteLength(String(row.arguments))).toBeLessThanOrEqual(100);
    expect(String(row.arguments)).not.toContain('\uFFFD');
  });

  it('redacts secrets in error messages too, and caps them', async () => {
    const { audit, last } = await log();
    await audit.record(entry(), undefined, `upstream said: bad token ghp_${'a'.repeat(36)} ${'x'.repeat(5000)}`);
    const row = last();
    expect(row.arguments).toBeNull();
    expect(row.arguments_digest).toBeNull();
    expect(row.error_message).not.toContain('ghp_aaaa');
    expect(String(row.error_message).length).toBeLessThanOrEqual(1000);
  });

  it('keeps at most 1000 characters of each text the host chose: name, request id, client name and version', async () => {
    const { audit, last } = await log();
    const huge = 'N'.repeat(4 * 1024 * 1024);
    await audit.record(entry({ name: huge, originalName: huge, requestId: huge, clientName: huge, clientVersion: huge }), undefined, `Unknown tool: ${huge}`);
    const row = last();
    for (const column of ['name', 'original_name', 'request_id', 'client_name', 'client_version', 'error_message']) {
      expect(String(row[column]), column).toBe(column === 'error_message' ? `Unknown tool: ${'N'.repeat(1000 - 14)}` : 'N'.repeat(1000));
    }
  });

  it('still redacts a secret that straddles the cut', async () => {
    const { audit, last } = await log();
    const secret = `ghp_${'a'.repeat(36)}`;
    await audit.record(entry({ requestId: `${'r'.repeat(990)}${secret}${'r'.repeat(5000)}` }), undefined, null);
    expect(String(last().request_id)).not.toContain('ghp_aaaa');
  });

  it('redacts a resources/read row\'s URIs (name and original_name) like its error message', async () => {
    const { audit, last } = await log();
    const uri = 'probe://readme?access_token=TokValue';
    await audit.record(entry({ method: 'resources/read', name: uri, originalName: uri }), undefined, `Resource not found: ${uri}`);
    const row = last();
    expect(row.name).toBe('probe://readme?access_token=[REDACTED:secret-param]');
    expect(row.original_name).toBe('probe://readme?access_token=[REDACTED:secret-param]');
    expect(row.error_message).toBe('Resource not found: probe://readme?access_token=[REDACTED:secret-param]');
  });

  it('redacts percent-encoded secrets in URIs, and a completion ref\'s template URI', async () => {
    const { audit, last } = await log();
    const bearer = `probe://t/${encodeURIComponent(`Bearer ${'Tok3nValue'.repeat(3)}`)}`;
    await audit.record(entry({ method: 'resources/read', name: bearer, originalName: null }), undefined, null);
    expect(last()).toMatchObject({ name: 'probe://t/Bearer%20[REDACTED:bearer-token]', original_name: null });
    const key = `AKIA${'QW3ERT7YU2IOP5AS'}`;
    const template = `probe://{id}/${encodeURIComponent(`key=${key}`)}`;
    await audit.record(entry({ method: 'completion/complete', name: template, originalName: template }), { argument: { name: 'id', value: 'a' } }, null);
    const row = last();
    expect(row.name).toBe('probe://{id}/key%3D[REDACTED:aws-access-key-id]');
    expect(row.original_name).toBe(row.name);
  });

  it('keeps tool names as they are, unless the host put a secret in one', async () => {
    const { audit, last } = await log();
    await audit.record(entry({ name: 'vault__read_secret', originalName: 'read_secret' }), {}, null);
    expect(last()).toMatchObject({ name: 'vault__read_secret', original_name: 'read_secret' });
    const token = `ghp_${'aB3dE5gH7j'.repeat(4)}`;
    await audit.record(entry({ name: `probe__echo Bearer ${token}`, originalName: null }), {}, 'Unknown tool');
    expect(last()).toMatchObject({ name: 'probe__echo Bearer [REDACTED:bearer-token]', original_name: null });
  });

  it("redacts the host's other words in a row: request id, client name and version", async () => {
    const { audit, last } = await log();
    const token = `ghp_${'aB3dE5gH7j'.repeat(4)}`;
    await audit.record(entry({ requestId: `req-${token}`, clientName: `cli ${token}`, clientVersion: `1.0 token=${token}` }), {}, null);
    expect(last()).toMatchObject({
      request_id: 'req-[REDACTED:github-token]',
      client_name: 'cli [REDACTED:github-token]',
      client_version: '1.0 token=[REDACTED:secret-param]',
    });
  });

  it('redacts the value of a completion argument named like a secret', async () => {
    const { audit, last } = await log();
    const args = { argument: { name: 'password', value: 'hunter2hunter2' }, context: { arguments: { user: 'ada' } } };
    await audit.record(entry({ method: 'completion/complete', name: 'fx__login', originalName: 'login' }), args, null);
    const row = last();
    expect(row.arguments).toBe('{"argument":{"name":"password","value":"[REDACTED]"},"context":{"arguments":{"user":"ada"}}}');
    expect(row.arguments_digest).toBe(argumentsDigest(args));
  });

  it('records the request methods that decide something; completion/complete only when configured', async () => {
    const on = (await log()).audit;
    const off = (await log(200, false)).audit;
    for (const m of ['tools/call', 'resources/read', 'resources/subscribe', 'prompts/get', 'completion/complete']) expect(on.records(m)).toBe(true);
    expect(off.records('completion/complete')).toBe(false);
    for (const m of ['tools/list', 'resources/unsubscribe', 'logging/setLevel', 'ping']) expect(on.records(m)).toBe(false);
  });
});

describe('AuditLog refusal rows', () => {
  afterEach(() => vi.useRealTimers());

  it("a summary row names what it counted (the commonest kind, and each kind's count), not the window's first refusal", async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    let now = 0;
    const refusals = { perWindow: 1, windowMs: 1000, now: () => now };
    const audit = new AuditLog(writerFor(t.db), { redactor: createRedactor(), maxArgumentBytes: 200, completions: true, refusals });
    const refuse = (httpMethod: string, path: string, rule: string, times: number) => {
      for (let i = 0; i < times; i++) audit.recordHttpRefusal({ httpMethod, path, decision: 'unauthenticated', rule, reason: 'no', address: '10.0.0.1' });
    };
    refuse('GET', '/admin/api/audit', 'auth:revoked-key', 2); // the first is a row; the second is counted
    refuse('POST', '/mcp', 'auth:unknown-key', 30);
    now = 1000;
    audit.summarizeRefusals();
    await audit.flush();
    const [summary] = t.db.prepare(`SELECT name, decision, error_message FROM audit_record WHERE rule = 'audit:refusals-counted'`).all() as { name: string; decision: string; error_message: string }[];
    expect(summary).toMatchObject({ name: 'POST /mcp', decision: 'unauthenticated' });
    expect(summary!.error_message).toMatch(/^31 more HTTP refusals from 10\.0\.0\.1, .* were counted, not recorded one by one \(the first 1 of a window are\): 30 POST \/mcp \(auth:unknown-key\), 1 GET \/admin\/api\/audit \(auth:revoked-key\)$/);
  });

  it("a window's timer that runs after a refusal already opened the next window does not end that window early", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const t = await tempDatabase();
    open.push(t.dataSource);
    let now = 0;
    const refusals = { perWindow: 2, windowMs: 1000, now: () => now };
    const audit = new AuditLog(writerFor(t.db), { redactor: createRedactor(), maxArgumentBytes: 200, completions: true, refusals });
    const refuse = (times: number) => {
      for (let i = 0; i < times; i++) {
        audit.recordHttpRefusal({ httpMethod: 'POST', path: '/mcp', decision: 'unauthenticated', rule: 'auth:unknown-key', reason: 'bad key', address: '10.0.0.1' });
      }
    };
    refuse(3); // two rows, one counted; the timer is armed for the window's end
    now = 1000; // the window is over, but its timer has not run yet (a busy event loop)
    refuse(3); // the next window: its summary first, then two rows, one counted
    vi.advanceTimersByTime(1000); // the first window's timer runs, early for the second window
    refuse(2); // still the second window: counted
    now = 2000;
    vi.advanceTimersByTime(1000);
    await audit.flush();
    const rows = (rule: string) => t.db.prepare('SELECT error_message FROM audit_record WHERE rule = ? ORDER BY id').all(rule) as { error_message: string }[];
    expect(rows('auth:unknown-key')).toHaveLength(4);
    expect(rows('audit:refusals-counted').map((r) => r.error_message.split(',')[0])).toEqual([
      '1 more HTTP refusal from 10.0.0.1',
      '3 more HTTP refusals from 10.0.0.1',
    ]);
  });
});
