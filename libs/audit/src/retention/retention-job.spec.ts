import { silentLogger } from '@switchboard/observability';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { entry, tempDatabase, writerFor } from '../../test-support/temp-db.js';
import { verifyChain } from '../chain/verify-chain.js';
import { PLAN_SQL, pruneBefore, restAfter } from './prune.js';
import { RetentionJob } from './retention-job.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

const MINUTE = 60_000;
const DAY = 86_400_000;

describe('RetentionJob', () => {
  it('finds the last row to prune in the time index, without reading the rows it keeps', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const plan = t.db.prepare(`EXPLAIN QUERY PLAN ${PLAN_SQL}`).all(Date.now()) as { detail: string }[];
    // The outer query; the head's MAX(id) is one step down the primary key.
    expect(plan[0].detail).toMatch(/USING COVERING INDEX audit_entry_at \(at<\?\)/);
  });

  it('prunes rows past the retention period and records the pruning in the chain', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db, 'relaxed');
    const now = Date.now();
    for (let i = 0; i < 12; i++) void writer.append(entry({ at: now - (i < 10 ? 100 : 1) * DAY }));
    await writer.flush();

    const job = new RetentionJob(t.db, 90 * DAY, silentLogger(), undefined);
    expect(await job.runOnce(now)).toBe(10);
    await writer.flush();
    const rows = t.db.prepare('SELECT id, method, arguments FROM audit_record ORDER BY id').all() as Record<string, unknown>[];
    expect(rows.map((r) => r.id)).toEqual([11, 12, 13]);
    expect(rows[2].method).toBe('audit/pruned');
    expect(JSON.parse(String(rows[2].arguments))).toEqual({
      rows: 10,
      throughId: 10,
      // The anchor it leaves: row 11's prev_hash, i.e. the removed row 10's hash.
      anchorHash: (t.db.prepare('SELECT prev_hash AS h FROM audit_entry WHERE id = 11').get() as { h: string }).h,
      prunedTotal: 10,
      before: new Date(now - 90 * DAY).toISOString(),
    });
    expect(await verifyChain(t.dataSource)).toMatchObject({ ok: true, rows: 3, prunedRows: 10, pruning: { markerId: 13 } });
    // Nothing more to prune: no second marker.
    expect(await job.runOnce(now)).toBe(0);
  });

  it('removes only rows older than the cut-off, stopping at the first newer row even when older rows follow it', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db, 'relaxed');
    const now = Date.now();
    // 50 fresh rows, then 3 rows that arrived 3 days ago (a stranded journal moved in by a later start).
    for (let i = 0; i < 50; i++) void writer.append(entry({ at: now - MINUTE }));
    for (let i = 0; i < 3; i++) void writer.append(entry({ at: now - 3 * DAY }));
    await writer.flush();

    const job = new RetentionJob(t.db, DAY, silentLogger(), undefined);
    expect(await job.runOnce(now)).toBe(0);
    expect((t.db.prepare('SELECT COUNT(*) AS n FROM audit_entry').get() as { n: number }).n).toBe(53);
    expect(await verifyChain(t.dataSource)).toMatchObject({ ok: true, rows: 53, prunedRows: 0 });
  });

  it('prunes the old prefix and keeps an old row that follows a newer one until the prefix reaches it', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db, 'relaxed');
    const now = Date.now();
    const ages = [...Array<number>(40).fill(3 * DAY), MINUTE, 3 * DAY, 3 * DAY, MINUTE];
    for (const age of ages) void writer.append(entry({ at: now - age }));
    await writer.flush();

    // Chunks of 2 rows: the plan reads the primary key in steps of 16 ids, so the newer row
    // at id 41 is found in its third step.
    expect((await pruneBefore(t.db, now - DAY, 2, now)).rows).toBe(40);
    const left = t.db.prepare('SELECT id, at FROM audit_entry ORDER BY id').all() as { id: number; at: number }[];
    expect(left.map((r) => r.id)).toEqual([41, 42, 43, 44, 45]);
    expect(await verifyChain(t.dataSource)).toMatchObject({ ok: true, prunedRows: 40, pruning: { throughId: 40, markerId: 45 } });

    // A day later row 41 is old too, and the prefix reaches rows 42 and 43.
    expect((await pruneBefore(t.db, now + DAY - MINUTE / 2, 2, now + DAY)).rows).toBe(4);
    expect(await verifyChain(t.dataSource)).toMatchObject({ ok: true, prunedRows: 44 });
  });

  it('stop() ends a run after the chunk in hand; the chain verifies, and the next run goes on from there', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db, 'relaxed');
    const now = Date.now();
    const pruned = () => (t.db.prepare('SELECT COUNT(*) AS n FROM audit_entry WHERE id <= 2500').get() as { n: number }).n;
    // Ten chunks' worth of old rows, and one to keep.
    for (let i = 0; i < 2501; i++) {
      void writer.append(entry({ at: now - (i < 2500 ? 100 : 1) * DAY }));
      if (i % 500 === 0) await writer.flush(); // within the writer's queue limit
    }
    await writer.flush();
    expect(pruned()).toBe(2500);

    const job = new RetentionJob(t.db, 90 * DAY, silentLogger(), undefined);
    job.start(0);
    while (pruned() === 2500) await new Promise((r) => setTimeout(r, 1));
    await job.stop();
    const left = pruned();
    expect(left).toBeGreaterThan(0);
    expect(await verifyChain(t.dataSource)).toMatchObject({ ok: true });

    expect(await new RetentionJob(t.db, 90 * DAY, silentLogger(), undefined).runOnce(now)).toBe(left);
    expect(pruned()).toBe(0);
    expect(await verifyChain(t.dataSource)).toMatchObject({ ok: true });
  });

  it("with a minute's retention, runs after runs still verify, each newest marker matching the anchor", async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const writer = writerFor(t.db, 'relaxed');
    const job = new RetentionJob(t.db, MINUTE, silentLogger(), undefined);
    let now = Date.now();
    for (let run = 0; run < 3; run++) {
      for (let i = 0; i < 5; i++) void writer.append(entry({ at: now + i }));
      await writer.flush();
      now += 2 * MINUTE;
      // Everything but the newest row goes, the previous run's marker included.
      expect(await job.runOnce(now)).toBe(run === 0 ? 4 : 6);
      const verdict = await verifyChain(t.dataSource);
      expect(verdict).toMatchObject({ ok: true, rows: 2, prunedRows: 4 + 6 * run });
      const head = t.db.prepare('SELECT id, method FROM audit_record ORDER BY id DESC LIMIT 1').get() as { id: number; method: string };
      expect(head.method).toBe('audit/pruned');
      expect(verdict.ok && verdict.pruning).toMatchObject({ markerId: head.id, markerAt: now, before: now - MINUTE });
    }
  });
});

describe('restAfter', () => {
  it('rests three times as long as a chunk took, and at least a timer tick, so calls get the rest of the loop', () => {
    expect(restAfter(1)).toBe(3);
    expect(restAfter(0.4)).toBe(2);
    expect(restAfter(0)).toBe(1);
  });
});
