import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { openDatabase, sqliteConnection } from './database.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) if (ds.isInitialized) await ds.destroy();
  open = [];
});

const dir = () => mkdtempSync(join(tmpdir(), 'sb-db-'));

async function opened(options: Partial<Parameters<typeof openDatabase>[0]> = {}) {
  const ds = await openDatabase({ file: join(dir(), 'nested', 'switchboard.sqlite'), entities: [], migrations: [], ...options });
  open.push(ds);
  return sqliteConnection(ds);
}

describe('openDatabase', () => {
  it('creates the database, its WAL and its directory for the owner only, whatever the umask', async () => {
    const base = dir();
    const file = join(base, 'nested', 'switchboard.sqlite');
    const before = process.umask(0o022);
    try {
      const ds = await openDatabase({ file, entities: [], migrations: [] });
      open.push(ds);
      sqliteConnection(ds).exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    } finally {
      process.umask(before);
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(`${file}-wal`).mode & 0o777).toBe(0o600);
    expect(statSync(join(base, 'nested')).mode & 0o777).toBe(0o700);
  });

  it('creates the directory and sets WAL, foreign keys, the busy timeout and full sync by default', async () => {
    const db = await opened({ busyTimeoutMs: 1234 });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(1234);
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
  });

  it('synchronous: normal', async () => {
    const db = await opened({ synchronous: 'normal' });
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
  });

  it('read-only opening never creates a file', async () => {
    await expect(
      openDatabase({ file: join(dir(), 'missing.sqlite'), entities: [], migrations: [], readonly: true }),
    ).rejects.toThrow();
  });
});
