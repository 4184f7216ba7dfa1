import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { entry, tempDatabase } from '../../test-support/temp-db.js';
// The worker runs compiled JavaScript: this imports the build (npm test builds first).
import { WorkerCommitter } from '../../dist/writer/worker-committer.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

describe('WorkerCommitter', () => {
  it('commits batches in its own thread, chained like any other rows, and answers with the head each left', async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const committer = new WorkerCommitter({ file: t.file, synchronous: 'full', busyTimeoutMs: 100 });
    const heads = [await committer.commit([entry(), entry()]), await committer.commit([entry()])];
    await committer.close();
    const rows = t.db.prepare('SELECT id, prev_hash AS prev, hash FROM audit_record ORDER BY id').all() as { id: number; prev: string; hash: string }[];
    expect(rows.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(rows[2].prev).toBe(rows[1].hash);
    // What the checkpoints name (HeadKeeper): known from the commit, not read back.
    expect(heads).toEqual([rows[1], rows[2]].map(({ id, hash }) => ({ id, hash })));
  });

  it("rejects with SQLite's code when the database is locked", async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    const committer = new WorkerCommitter({ file: t.file, synchronous: 'normal', busyTimeoutMs: 50 });
    const locker = new Database(t.file);
    locker.prepare('BEGIN IMMEDIATE').run();
    await expect(committer.commit([entry()])).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    locker.prepare('ROLLBACK').run();
    locker.close();
    await committer.commit([entry()]);
    await committer.close();
  });
});
