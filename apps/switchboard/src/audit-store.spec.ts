import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

describe('openMigrated', () => {
  it('processes starting at once on a fresh data dir all open it, and each migration runs once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-migrate-race-'));
    // Compiled module: a child process cannot load TypeScript (npm test builds first).
    const module = new URL('../dist/audit-store.js', import.meta.url).href;
    const config = JSON.stringify({ dataDir, audit: { synchronous: 'normal' } });
    const script = `const m = await import(${JSON.stringify(module)}); const { dataSource } = await m.openMigrated(${config}); await dataSource.destroy();`;
    const exits = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<string>((resolve) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
            let err = '';
            child.stderr.on('data', (c: Buffer) => (err += c.toString()));
            child.once('exit', (code) => resolve(code === 0 ? 'ok' : `exit ${code}: ${err}`));
          }),
      ),
    );
    expect(exits).toEqual(Array(8).fill('ok'));
    const db = new Database(join(dataDir, 'switchboard.sqlite'), { readonly: true });
    const ran = db.prepare('SELECT name FROM migrations ORDER BY id').all() as { name: string }[];
    db.close();
    expect(ran.map((m) => m.name)).toEqual(['CreateAuditLog1795219200000', 'SlimAuditIndexes1795222800000', 'AuditRecordAsJson1795226400000', 'CreateApiKeys1795230000000', 'CreateToolPins1795233600000', 'CreatePrincipalSecrets1795237200000', 'CreateAuditJournalMarks1795240800000', 'PrincipalIndexInIdOrder1795244400000', 'ApiKeyRotation1795248000000']);
    // Eight Node processes loading TypeORM: the unit timeout (10 s) is for in-process work,
    // and a loaded two-core machine took longer than that to start them all.
  }, 60_000);
});
