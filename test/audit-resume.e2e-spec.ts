import { spawn } from 'node:child_process';
import { JournalFile, recordText, type AuditEntry } from '@switchboard/audit';
import { loadConfigWithWarnings, type GatewayConfig } from '@switchboard/config';
import { silentLogger } from '@switchboard/observability';
import { beforeAll, describe, expect, it } from 'vitest';
import { journalDir, openAuditStore } from '../apps/switchboard/src/audit-store.js';
import { appendRows, entry, MINUTE, NOW } from './support/audit-samples.js';
import { cliRunsTimeout, runCli } from './support/cli.js';
import { eventually, SWITCHBOARD_BIN, writeConfig } from './support/daemon.js';

/**
 * Resuming an export by row id (`--after-id`) against a real SQLite file, through the compiled
 * CLI. A row can be committed after rows that arrived later than it (its id is given at
 * commit, its `at` at arrival): here one moved in from a crashed run's journal at the next
 * start. Back-to-back `--since`/`--until` windows miss it; resuming by id does not.
 */

const iso = (ms: number) => new Date(ms).toISOString();
const ids = (jsonl: string) => (jsonl === '' ? [] : jsonl.trimEnd().split('\n').map((line) => (JSON.parse(line) as { id: number }).id));

/**
 * A row left in the journal of a process that died before committing it, then moved into the
 * log by the next start, as `switchboard start` does (openAuditStore recovers journals).
 */
async function moveInFromCrashedJournal(config: GatewayConfig, late: AuditEntry): Promise<void> {
  const journal = JournalFile.create(journalDir(config));
  journal.write([recordText(0, late)]);
  journal.close(false); // its lock released, its file left: as a kill -9 leaves it
  const store = await openAuditStore(config, silentLogger());
  await store.close();
}

describe('switchboard audit export and tail resumed by row id', () => {
  let configPath: string;
  let config: GatewayConfig;
  const withConfig = (...args: string[]) => [...args, '--config', configPath];
  const exportJsonl = (...args: string[]) => runCli(withConfig('audit', 'export', '--format', 'jsonl', ...args));

  beforeAll(async () => {
    configPath = writeConfig({ mcpServers: {} });
    config = loadConfigWithWarnings(configPath).config;
    await appendRows(config, [
      entry({ at: NOW - 50 * MINUTE, name: 'fx__first' }),
      entry({ at: NOW - 40 * MINUTE, name: 'fx__second' }),
      entry({ at: NOW - 30 * MINUTE, name: 'fx__third' }),
    ]);
  });

  it('a row committed late with an old time: time windows miss it, --after-id does not', { timeout: cliRunsTimeout(8) }, async () => {
    // The first cron run, at NOW - 25m: a time window, and a run that keeps the id.
    const firstCut = NOW - 25 * MINUTE;
    const firstWindow = exportJsonl('--since', iso(NOW - 60 * MINUTE), '--until', iso(firstCut));
    expect(ids(firstWindow.stdout)).toEqual([1, 2, 3]);
    const firstById = exportJsonl();
    expect(ids(firstById.stdout)).toEqual([1, 2, 3]);
    // stdout is the data only; the id to resume from is on stderr.
    expect(firstById.stderr).toBe('note: exported 3 rows; resume with --after-id 3\n');

    // Then: a row that arrived at NOW - 35m, inside the window already exported, is moved in
    // from a crashed run's journal (id 4); a row that arrived at NOW - 20m is committed (id 5).
    await moveInFromCrashedJournal(config, entry({ at: NOW - 35 * MINUTE, name: 'fx__late' }));
    await appendRows(config, [entry({ at: NOW - 20 * MINUTE, name: 'fx__after' })]);

    // The next cron run, at NOW - 10m: the window from the last cut misses id 4 for good.
    const secondWindow = exportJsonl('--since', iso(firstCut), '--until', iso(NOW - 10 * MINUTE));
    expect([...ids(firstWindow.stdout), ...ids(secondWindow.stdout)]).toEqual([1, 2, 3, 5]);
    // Resumed by id: the late row and the new one, none twice.
    const secondById = exportJsonl('--after-id', '3');
    expect(ids(secondById.stdout)).toEqual([4, 5]);
    expect(secondById.stdout).toContain('"name":"fx__late"');
    expect(secondById.stderr).toBe('note: exported 2 rows; resume with --after-id 5\n');
    // Nothing new: no rows, and the same id to resume from.
    const third = exportJsonl('--after-id', '5');
    expect([third.code, third.stdout, third.stderr]).toEqual([0, '', 'note: exported 0 rows; resume with --after-id 5\n']);
  });

  it('--after-id combines with the other filters; with filters it resumes from the newest id read, not the last one written', () => {
    const r = exportJsonl('--after-id', '1', '--tool', 'fx__late');
    expect(ids(r.stdout)).toEqual([4]);
    // Rows 5 (and up) were read and left out by the filter: resuming after them skips nothing.
    expect(r.stderr).toMatch(/^note: exported 1 row; resume with --after-id 5\n$/);
    const csv = runCli(withConfig('audit', 'export', '--format', 'csv', '--after-id', '3'));
    expect(csv.stdout.trimEnd().split('\r\n').slice(1).map((line) => line.split(',')[0])).toEqual(['4', '5']);
  });

  it('with --until there is no id to resume from without a gap: the note says so', () => {
    const r = exportJsonl('--until', iso(NOW - 32 * MINUTE));
    expect(ids(r.stdout)).toEqual([1, 2, 4]);
    expect(r.stderr).toBe(
      'note: exported 3 rows; no --after-id to resume from with --until: a row it left out for its time can have a smaller id than rows it exported\n',
    );
  });

  it('an --after-id beyond the newest row is warned about, and the resume id is the newest row', () => {
    const r = exportJsonl('--after-id', '99');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'warning: --after-id 99 is beyond the newest row of the log (id 5): was the log replaced or cut? Rows committed from now on get ids from 6\n' +
        'note: exported 0 rows; resume with --after-id 5\n',
    );
  });

  it('tail --after-id prints every row after it, oldest first; -f then follows new ones', async () => {
    const all = runCli(withConfig('audit', 'tail', '--json', '--after-id', '2'));
    expect([all.code, all.stderr]).toEqual([0, '']);
    expect(ids(all.stdout)).toEqual([3, 4, 5]);

    const proc = spawn(process.execPath, [SWITCHBOARD_BIN, ...withConfig('audit', 'tail', '--json', '-f', '--after-id', '4')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    await eventually(() => stdout.includes('fx__after'), 10_000, 'the row after id 4');
    await appendRows(config, [entry({ name: 'fx__followed' })]);
    await eventually(() => stdout.includes('fx__followed'), 10_000, 'the followed row');
    expect(ids(stdout)).toEqual([5, 6]);
    proc.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  const refusals: [string[], string][] = [
    [['audit', 'export', '--format', 'jsonl', '--after-id', 'x'], "--after-id 'x': expected a row id, a whole number from 0 (the id of the last row you have)\n"],
    [['audit', 'export', '--format', 'jsonl', '--after-id', '-1'], "--after-id '-1': expected a row id, a whole number from 0 (the id of the last row you have)\n"],
    [['audit', 'tail', '--after-id', '3', '-n', '5'], '-n/--lines counts back from the newest row, --after-id reads on from a row id: give one of them'],
  ];

  it('a bad --after-id, or one with -n, is a usage error (exit 2)', { timeout: cliRunsTimeout(refusals.length) }, () => {
    for (const [args, says] of refusals) {
      const r = runCli(withConfig(...args));
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`switchboard: ${says}`);
    }
  });
});
