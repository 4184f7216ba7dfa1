import { silentLogger } from '@switchboard/observability';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { entry, tempDatabase, writerFor } from '../../test-support/temp-db.js';
import { AuditLog } from '../audit-log.js';
import { verifyChain } from '../chain/verify-chain.js';
import { createRedactor } from '../redaction/index.js';
import { parseRetention } from './prune.js';
import { RetentionJob } from './retention-job.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

const DAY = 86_400_000;

describe('RetentionJob', () => {
  it('prunes rows past the retention period and records the pruning in the chain', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db, 'relaxed');
    const log = new AuditLog(writer, { redactor: createRedactor(), maxArgumentBytes: 1000, completions: true });
    const now = Date.now();
    for (let i = 0; i < 12; i++) void writer.append(entry({ at: now - (i < 10 ? 100 : 1) * DAY }));
    await writer.flush();

    const job = new RetentionJob(t.db, log, 90 * DAY, silentLogger());
    expect(await job.runOnce(now)).toBe(10);
    await writer.flush();
    const rows = t.db.prepare('SELECT id, method, arguments FROM audit_record ORDER BY id').all() as Record<string, unknown>[];
    expect(rows.map((r) => r.id)).toEqual([11, 12, 13]);
    expect(rows[2].method).toBe('audit/pruned');
    expect(JSON.parse(String(rows[2].arguments))).toMatchObject({ rows: 10, throughId: 10 });
    expect(await verifyChain(t.dataSource)).toMatchObject({ ok: true, rows: 3, prunedRows: 10 });
    // Nothing more to prune: no second marker.
    expect(await job.runOnce(now)).toBe(0);
  });
});

describe('parseRetention', () => {
  it.each([
    ['30m', 30 * 60_000],
    ['12h', 12 * 3_600_000],
    ['90d', 90 * DAY],
    ['2w', 14 * DAY],
  ])('%s', (text, ms) => expect(parseRetention(text)).toBe(ms));

  it('off means keep everything; anything else is refused', () => {
    expect(parseRetention('off')).toBeUndefined();
    expect(() => parseRetention('90')).toThrow(/90d/);
  });
});
