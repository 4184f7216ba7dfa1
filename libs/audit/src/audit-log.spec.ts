import { afterEach, describe, expect, it } from 'vitest';
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

  it('records the four request methods; completion/complete only when configured', async () => {
    const on = (await log()).audit;
    const off = (await log(200, false)).audit;
    for (const m of ['tools/call', 'resources/read', 'prompts/get', 'completion/complete']) expect(on.records(m)).toBe(true);
    expect(off.records('completion/complete')).toBe(false);
    expect(on.records('tools/list')).toBe(false);
  });
});
