import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AuditQuery, AuditWriter, InlineCommitter, pruneBefore, type AuditEntry, type AuditRow } from '@switchboard/audit';
import { loadConfigWithWarnings, type GatewayConfig } from '@switchboard/config';
import { silentLogger } from '@switchboard/observability';
import { migrate, openDatabase, sqliteConnection } from '@switchboard/persistence';
import { MIGRATIONS } from '@switchboard/migrations';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { databasePath, openMigrated } from '../apps/switchboard/src/audit-store.js';
import { AUDIT_ENTITIES } from '@switchboard/audit';
import { entry as sampleEntry } from '../libs/audit/test-support/temp-db.js';
import { eventually, SWITCHBOARD_BIN, tempDir, writeConfig } from './support/daemon.js';
import { cliRunsTimeout, runCli } from './support/cli.js';

/**
 * `switchboard db` and `switchboard audit` against a real SQLite file: rows are written by
 * the real AuditWriter, read back by the compiled CLI, and its output parsed and compared
 * with what the log holds.
 */

const NOW = Date.now();
const MINUTE = 60_000;
const STACK_TRACE = /\bat \S+ \(|node:internal|\.[cm]?[jt]s:\d+/;

/** The shared sample row as a tools/call of fx__echo by alice, with the fields a test is about. */
const entry = (fields: Partial<AuditEntry>): AuditEntry =>
  sampleEntry({
    at: NOW,
    principal: 'alice',
    authMethod: 'loopback',
    upstream: 'fx',
    name: 'fx__echo',
    originalName: 'echo',
    latencyMs: 12.5,
    responseBytes: 100,
    ...fields,
  });

/**
 * Five rows that exercise the readers: two older than 90 minutes, a denial, a read that is not
 * a tool call, and text that CSV must quote (comma, quote, CRLF) or neutralise (a formula).
 */
const ENTRIES: AuditEntry[] = [
  entry({ at: NOW - 180 * MINUTE, arguments: '{"text":"a,b \\"quoted\\""}', errorMessage: 'line1\r\nline2' }),
  entry({ at: NOW - 120 * MINUTE, principal: 'bob', outcome: 'tool_error' }),
  entry({
    at: NOW - 30 * MINUTE,
    name: 'fx__nope',
    originalName: null,
    upstream: null,
    decision: 'denied',
    rule: 'catalog:unknown-tool',
    outcome: null,
    errorCode: -32602,
    errorMessage: 'Unknown tool: fx__nope',
  }),
  entry({
    at: NOW - 20 * MINUTE,
    method: 'resources/read',
    name: 'fixture://static/hello',
    originalName: 'fixture://static/hello',
    arguments: null,
    argumentsDigest: null,
  }),
  entry({
    at: NOW - 10 * MINUTE,
    principal: '=HYPERLINK("http://evil.example")',
    name: 'fx__add',
    originalName: 'add',
    arguments: '{"a":1,"b":2}',
    outcome: 'error',
    errorCode: -32603,
    errorMessage: 'Internal error',
  }),
];

/** Rows as the daemon writes them: through the real group-commit writer, committed. */
async function appendRows(config: GatewayConfig, entries: AuditEntry[]): Promise<void> {
  const { dataSource } = await openMigrated(config);
  const writer = new AuditWriter(new InlineCommitter(sqliteConnection(dataSource)), { mode: 'strict', flushMs: 10, maxQueuedRows: 1000, logger: silentLogger() });
  const committed = entries.map((e) => writer.append(e));
  await writer.flush();
  await Promise.all(committed);
  await writer.close();
  await dataSource.destroy();
}

async function readRows(config: GatewayConfig): Promise<AuditRow[]> {
  const { dataSource } = await openMigrated(config);
  try {
    const rows: AuditRow[] = [];
    for await (const row of new AuditQuery(dataSource).rows({})) rows.push(row);
    return rows;
  } finally {
    await dataSource.destroy();
  }
}

/** RFC 4180: quoted fields may hold commas, CR, LF and doubled quotes; records end with CRLF. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') record.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      (record = []), (field = ''), i++;
    } else field += c;
  }
  expect(field).toBe('');
  return records;
}

/** What a CSV cell holds for a value: formulas carry the neutralising quote. */
function csvCell(value: unknown): string {
  if (value === null) return '';
  const text = String(value);
  return typeof value === 'string' && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

const withTime = (row: AuditRow) => ({ ...row, time: new Date(row.at).toISOString() });

describe('switchboard audit and db commands', () => {
  let configPath: string;
  let config: GatewayConfig;
  let rows: AuditRow[];
  const withConfig = (...args: string[]) => [...args, '--config', configPath];

  beforeAll(async () => {
    configPath = writeConfig({ mcpServers: {} });
    config = loadConfigWithWarnings(configPath).config;
    await appendRows(config, ENTRIES);
    rows = await readRows(config);
    expect(rows.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
  });

  it('tail prints the newest rows oldest first, one line each', () => {
    const r = runCli(withConfig('audit', 'tail'));
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(
      new RegExp(`^${new Date(rows[0].at).toISOString()}  allowed  ok  loopback:alice  tools/call  fx__echo  fx  13ms  \\{"text":"a,b`),
    );
    // The caller as stats and --principal name it: these rows' principals came over loopback.
    expect(lines[2]).toContain('  denied  -32602  loopback:alice  tools/call  fx__nope  -  13ms  {"text":"hi"}');
    expect(lines[4]).toContain('  allowed  error:-32603  loopback:=HYPERLINK(');

    const two = runCli(withConfig('audit', 'tail', '-n', '2'));
    expect(two.stdout.trimEnd().split('\n').map((l) => l.slice(0, 24))).toEqual(
      rows.slice(3).map((row) => new Date(row.at).toISOString()),
    );
  });

  it('tail --json prints JSONL and honours filters', () => {
    const r = runCli(withConfig('audit', 'tail', '--json', '--principal', 'bob'));
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l))).toEqual([withTime(rows[1])]);
    const recent = runCli(withConfig('audit', 'tail', '--json', '--since', '90m'));
    expect(recent.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).id)).toEqual([3, 4, 5]);
  });

  it('export --format jsonl writes every row, oldest first, with an ISO time', () => {
    const r = runCli(withConfig('audit', 'export', '--format', 'jsonl'));
    expect(r.code).toBe(0);
    expect(r.stdout.endsWith('\n')).toBe(true);
    expect(r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l))).toEqual(rows.map(withTime));
  });

  it('export --format csv is RFC 4180 with formulas neutralised, and parses back to the rows', () => {
    const r = runCli(withConfig('audit', 'export', '--format', 'csv'));
    expect(r.code).toBe(0);
    const [header, ...records] = parseCsv(r.stdout);
    expect(header.slice(0, 4)).toEqual(['id', 'time', 'at', 'principal']);
    expect(records).toHaveLength(rows.length);
    records.forEach((record, i) => {
      const expected = withTime(rows[i]) as unknown as Record<string, unknown>;
      expect(Object.fromEntries(header.map((column, j) => [column, record[j]]))).toEqual(
        Object.fromEntries(header.map((column) => [column, csvCell(expected[column])])),
      );
    });
    expect(records[4][3]).toBe(`'=HYPERLINK("http://evil.example")`);
    expect(records[0][header.indexOf('errorMessage')]).toBe('line1\r\nline2');
  });

  it('export --since takes a row at exactly that time and --until leaves one out; JSON and CSV name fields in camelCase', () => {
    const iso = (row: AuditRow) => new Date(row.at).toISOString();
    const between = (format: string) => runCli(withConfig('audit', 'export', '--format', format, '--since', iso(rows[1]), '--until', iso(rows[3])));
    const jsonl = between('jsonl');
    expect(jsonl.code).toBe(0);
    const exported = jsonl.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(exported.map((r) => r.id)).toEqual([2, 3]);
    const [header, ...records] = parseCsv(between('csv').stdout);
    expect(records.map((rec) => rec[0])).toEqual(['2', '3']);
    const fields = [
      'id', 'time', 'at', 'principal', 'authMethod', 'sessionId', 'transport', 'clientName', 'clientVersion',
      'protocolVersion', 'upstream', 'method', 'name', 'originalName', 'arguments', 'argumentsTruncated',
      'argumentsDigest', 'decision', 'rule', 'outcome', 'errorCode', 'errorMessage', 'latencyMs',
      'responseBytes', 'requestId', 'traceId', 'prevHash', 'hash',
    ];
    expect(header).toEqual(fields);
    expect(Object.keys(exported[0])).toEqual(fields);
  });

  it('export --output writes the same bytes to a file; filters apply', () => {
    const file = join(tempDir(), 'audit.csv');
    const r = runCli(withConfig('audit', 'export', '--format', 'csv', '--output', file, '--decision', 'denied'));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const toStdout = runCli(withConfig('audit', 'export', '--format', 'csv', '--decision', 'denied'));
    expect(toStdout.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(toStdout.stdout);
    const [, ...records] = parseCsv(readFileSync(file, 'utf8'));
    expect(records.map((rec) => rec[0])).toEqual(['3']);
    // The rows the database keeps owner-only, whatever the umask.
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('export --output refuses the database, its WAL, a path in the data dir or a link to the database, and the log stays whole', () => {
    const file = databasePath(config);
    const link = join(tempDir(), 'looks-harmless.csv');
    symlinkSync(file, link);
    for (const output of [file, `${file}-wal`, join(config.dataDir, 'audit-journal', 'x.journal'), link]) {
      const r = runCli(withConfig('audit', 'export', '--format', 'csv', '--output', output));
      expect(r.code, output).toBe(2);
      expect(r.stderr).toBe(
        `switchboard: --output ${output} is in the data directory ${config.dataDir}, which holds the audit log itself; write the export elsewhere\n`,
      );
    }
    expect(statSync(file).size).toBeGreaterThan(0);
    const verify = runCli(withConfig('audit', 'verify'));
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(new RegExp(`^ok: ${rows.length} rows`));
  });

  it('stats counts tool calls, errors and denials per tool and per principal, and every row by decision and method', () => {
    const r = runCli(withConfig('audit', 'stats', '--json'));
    expect(r.code).toBe(0);
    const stats = JSON.parse(r.stdout);
    expect(stats).toMatchObject({
      rows: 5,
      byDecision: { allowed: 4, denied: 1, limited: 0, unauthenticated: 0, refused: 0 },
      calls: 4,
      errors: 2,
      cancelled: 0,
      denials: 1,
    });
    expect(stats.byTool).toEqual([
      { tool: 'fx__echo', upstream: 'fx', calls: 2, errors: 1, denials: 0 },
      { tool: 'fx__add', upstream: 'fx', calls: 1, errors: 1, denials: 0 },
      { tool: 'fx__nope', upstream: null, calls: 1, errors: 0, denials: 1 },
    ]);
    // alice's resources/read is not a tool call: it is counted per method only.
    expect(stats.byPrincipal).toEqual(
      expect.arrayContaining([
        { principal: 'loopback:alice', calls: 2, errors: 0, denials: 1 },
        { principal: 'loopback:bob', calls: 1, errors: 1, denials: 0 },
        { principal: 'loopback:=HYPERLINK("http://evil.example")', calls: 1, errors: 1, denials: 0 },
      ]),
    );
    expect(stats.byPrincipal).toHaveLength(3);
    expect(stats.byMethod).toEqual([
      { method: 'tools/call', rows: 4, errors: 2, denials: 1 },
      { method: 'resources/read', rows: 1, errors: 0, denials: 0 },
    ]);

    const text = runCli(withConfig('audit', 'stats', '--tool', 'fx__echo'));
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^2 rows: 2 allowed, 0 denied, 0 limited, 0 unauthenticated, 0 refused\n2 tool calls \(tools\/call rows\): 1 error, 0 cancelled, 0 denials \(not allowed\)\n/,
    );
    expect(text.stdout).toMatch(/^fx__echo\s+fx\s+2\s+1\s+0$/m);
    expect(text.stdout).toMatch(/^tools\/call\s+2\s+1\s+0$/m);
  });

  it('stats and verify on a stdout that fails say so in one line (exit 1); on a reader that left, keep their exit code', async () => {
    const full = openSync('/dev/full', 'w');
    try {
      for (const command of [['audit', 'stats'], ['audit', 'verify']]) {
        const r = spawnSync(process.execPath, [SWITCHBOARD_BIN, ...withConfig(...command)], {
          encoding: 'utf8',
          timeout: 30_000,
          stdio: ['ignore', full, 'pipe'],
        });
        expect(r.status, command.join(' ')).toBe(1);
        expect(r.stderr).toBe('switchboard: writing to stdout failed: ENOSPC: no space left on device, write\n');
      }
    } finally {
      closeSync(full);
    }
    for (const command of [['audit', 'stats'], ['audit', 'verify']]) {
      const proc = spawn(process.execPath, [SWITCHBOARD_BIN, ...withConfig(...command)], { stdio: ['ignore', 'pipe', 'pipe'] });
      proc.stdout.destroy(); // `| true`: the reader is gone before anything is written
      let stderr = '';
      proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      // 'close': after 'exit' the last of stderr may still be unread.
      const code = await new Promise<number | null>((resolve) => proc.once('close', (c) => resolve(c)));
      expect(stderr, command.join(' ')).toBe('');
      expect(code).toBe(0);
    }
  });

  /** Each run of the CLI the usage-error test makes, and what it must say. */
  const usageRefusals = (): [string[], RegExp][] => [
    [withConfig('audit', 'tail', '--since', 'last tuesday'), /^switchboard: --since 'last tuesday': expected an ISO 8601 date/],
    [withConfig('audit', 'export', '--format', 'xml'), /^switchboard: --format 'xml': expected jsonl or csv\n$/],
    [withConfig('audit', 'export'), /^switchboard: --format is required/],
    [withConfig('audit', 'stats', '--decision', 'maybe'), /^switchboard: --decision 'maybe': expected one of allowed, denied, limited, unauthenticated, refused\n$/],
    [withConfig('audit', 'tail', '-n', '0'), /^switchboard: -n '0': expected a number of rows from 1 to/],
    [withConfig('audit', 'tail', '--frobnicate'), /^switchboard: Unknown option '--frobnicate'/],
    [withConfig('audit', 'rewrite'), /^switchboard: unknown audit command 'rewrite'; try: tail, export, stats, verify/],
    [['db'], /^switchboard: a command is missing\n/],
    // An option in the command's place is no command ...
    [['audit', '--config', configPath, 'tail'], /^switchboard: a command is missing \('--config' is an option, not a command\)\n/],
    [['db', '--data-dir', 'elsewhere', 'migrate'], /^switchboard: a command is missing \('--data-dir' is an option, not a command\)\n/],
    // ... but one written before the family, where the README says it may go, is not blamed.
    [['-c', configPath, 'audit'], /^switchboard: a command is missing\n\nUsage:/],
    [['-c', configPath, 'keys'], /^switchboard: a command is missing; try: create, list, revoke\n$/],
  ];

  it('bad filter values and options are usage errors (exit 2) that say what is wrong', { timeout: cliRunsTimeout(usageRefusals().length) }, () => {
    const refusals = usageRefusals();
    for (const [args, says] of refusals) {
      const r = runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(says);
      expect(r.stderr).not.toMatch(STACK_TRACE);
    }
  });

  it('tail -f prints rows committed after it started, and exits 0 on SIGINT', async () => {
    // carol's newest row before it starts: printed first, which also says the CLI has read
    // the head it follows from, so every row appended after that must come from following.
    await appendRows(config, [entry({ principal: 'carol', name: 'fx__before' }), entry({ principal: 'dave', name: 'fx__after_carol' })]);
    const proc = spawn(process.execPath, [SWITCHBOARD_BIN, ...withConfig('audit', 'tail', '-n', '1', '-f', '--principal', 'carol')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    await eventually(() => stdout.includes('fx__before'), 10_000, "carol's newest row");
    await appendRows(config, [entry({ principal: 'dave' }), entry({ principal: 'carol', name: 'fx__followed' })]);
    await eventually(() => stdout.includes('fx__followed'), 10_000, 'the followed row');
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('fx__before');
    expect(lines[1]).toContain('fx__followed');
    proc.kill('SIGINT');
    expect(await exited).toBe(0);
    rows = await readRows(config);
  });

  it('verify reports an intact chain, then the first edited row (exit 1)', () => {
    const ok = runCli(withConfig('audit', 'verify'));
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      new RegExp(`^ok: ${rows.length} rows, chain intact \\(head ${rows[rows.length - 1].hash}, 0 rows pruned by retention\\)\\n$`),
    );

    const db = new Database(databasePath(config));
    db.prepare(`UPDATE audit_entry SET record = json_set(record, '$[2]', 'mallory'), principal = 'mallory' WHERE id = 3`).run();
    db.close();
    const broken = runCli(withConfig('audit', 'verify'));
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^BROKEN at row 3: .*edited.* \(2 rows verified before it\)\n$/);
  });
});

describe('switchboard audit verify and retention pruning', () => {
  /** A database of its own with `entries` committed; returns the config and the file. */
  async function logWith(entries: AuditEntry[]) {
    const configPath = writeConfig({ mcpServers: {} });
    const config = loadConfigWithWarnings(configPath).config;
    await appendRows(config, entries);
    return { config, configPath, file: databasePath(config) };
  }

  function sql(file: string, ...statements: string[]) {
    const db = new Database(file);
    for (const s of statements) db.prepare(s).run();
    db.close();
  }

  it('accepts rows pruned by retention (a minute, twice), naming the audit/pruned row that accounts for them', async () => {
    // Not the file's NOW: on a loaded machine the tests before this one can take over a minute.
    const now = Date.now();
    const { config, configPath, file } = await logWith(
      Array.from({ length: 12 }, (_, i) => entry({ at: now - (i < 10 ? 5 : 0) * MINUTE + i })),
    );
    const prune = async (now: number) => {
      const { dataSource } = await openMigrated(config);
      try {
        return await pruneBefore(sqliteConnection(dataSource), now - MINUTE, 1000, now);
      } finally {
        await dataSource.destroy();
      }
    };
    expect(await prune(Date.now())).toEqual({ rows: 10, throughId: 10, markerId: 13 });
    const once = runCli(['audit', 'verify', '--config', configPath]);
    expect(once.code).toBe(0);
    expect(once.stdout).toMatch(/^ok: 3 rows, chain intact \(head [0-9a-f]{64}, 10 rows pruned by retention\)\n/);
    expect(once.stdout).toMatch(/\npruned: rows through id 10, accounted for by the audit\/pruned row 13 written \S+Z, cut-off \S+Z\n$/);

    // Two minutes on: rows 11-12 and the first marker go; the second marker accounts for all 12.
    expect(await prune(Date.now() + 2 * MINUTE)).toEqual({ rows: 2, throughId: 12, markerId: 14 });
    const twice = runCli(['audit', 'verify', '--config', configPath]);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toMatch(/^ok: 2 rows, chain intact \(head [0-9a-f]{64}, 12 rows pruned by retention\)\npruned: rows through id 12, accounted for by the audit\/pruned row 14 /);

    // Rows deleted past what the marker pruned, the anchor moved over them: refused.
    sql(
      file,
      'DELETE FROM audit_entry WHERE id <= 13',
      `UPDATE audit_chain SET anchor_id = 13, anchor_hash = (SELECT prev_hash FROM audit_entry WHERE id = 14), pruned_rows = 13`,
    );
    const forged = runCli(['audit', 'verify', '--config', configPath]);
    expect(forged.code).toBe(1);
    expect(forged.stdout).toMatch(/^BROKEN before row 14: rows before id 14 are missing and no pruning marker in the chain accounts for them /);
  });

  /**
   * `count` rows, all but the newest older than the retention cut-off; runs the reader with
   * its stdout held, so it waits part-way through its first page, prunes meanwhile, then
   * reads what it printed (JSON lines).
   */
  async function readWhilePruning(count: number, command: string[]): Promise<AuditRow[]> {
    const now = Date.now();
    const entries = Array.from({ length: count }, (_, i) => entry({ at: now - 10 * MINUTE + i }));
    // The writer queues at most 1000 rows at a time here.
    const { config, configPath } = await logWith(entries.slice(0, 1000));
    for (let i = 1000; i < count; i += 1000) await appendRows(config, entries.slice(i, i + 1000));
    const proc = spawn(process.execPath, [SWITCHBOARD_BIN, 'audit', ...command, '--config', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    // 'close': after 'exit' the last rows on stdout may still be unread.
    const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
    // Not read yet: the reader fills the pipe and waits, part-way through its first page of rows.
    proc.stdout.pause();
    await new Promise((resolve) => proc.stdout.once('readable', resolve));
    const { dataSource } = await openMigrated(config);
    try {
      expect(await pruneBefore(sqliteConnection(dataSource), now - 5 * MINUTE)).toMatchObject({ rows: count - 1 });
    } finally {
      await dataSource.destroy();
    }
    let stdout = '';
    proc.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    proc.stdout.resume();
    expect(await exited).toBe(0);
    return stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as AuditRow);
  }

  it('export reads one snapshot: rows that retention prunes while it runs are still in it, and its chain has no gap', async () => {
    const count = 4000;
    const exported = await readWhilePruning(count, ['export', '--format', 'jsonl']);
    expect(exported.map((row) => row.id)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    for (let i = 1; i < exported.length; i++) expect(exported[i].prevHash).toBe(exported[i - 1].hash);
  });

  it('tail reads one snapshot too: rows pruned while it prints are still printed', async () => {
    const count = 3000;
    const printed = await readWhilePruning(count, ['tail', '-n', String(count), '--json']);
    expect(printed.map((row) => row.id)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  });

  it('refuses rows deleted with a forged anchor and no pruning marker, although the head hash is unchanged', async () => {
    const { configPath, file } = await logWith(Array.from({ length: 32 }, (_, i) => entry({ at: NOW - 3 * MINUTE + i })));
    const before = runCli(['audit', 'verify', '--config', configPath]);
    expect(before.code).toBe(0);
    const head = /head ([0-9a-f]{64})/.exec(before.stdout)![1];
    // The reviewer's reproduction.
    sql(
      file,
      'DELETE FROM audit_entry WHERE id <= 10',
      `INSERT INTO audit_chain VALUES ('anchor', 10, (SELECT prev_hash FROM audit_entry WHERE id = 11), 10)`,
    );
    const db = new Database(file, { readonly: true });
    expect((db.prepare('SELECT hash FROM audit_entry ORDER BY id DESC LIMIT 1').get() as { hash: string }).hash).toBe(head);
    db.close();
    const after = runCli(['audit', 'verify', '--config', configPath]);
    expect(after.code).toBe(1);
    expect(after.stdout).toBe(
      'BROKEN before row 11: rows before id 11 are missing and no pruning marker in the chain accounts for them ' +
        '(audit_chain claims 10 rows pruned through id 10; there is no audit/pruned row)\n',
    );
  });
});

describe('switchboard audit verify and the schema the readers rely on', () => {
  it('a rewritten audit_record view fails verify (exit 1), and export warns that what it shows may not be the chained rows', async () => {
    const configPath = writeConfig({ mcpServers: {} });
    const config = loadConfigWithWarnings(configPath).config;
    await appendRows(config, ENTRIES.slice(0, 3));
    const db = new Database(databasePath(config));
    const view = (db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'audit_record'`).get() as { sql: string }).sql;
    db.exec('DROP VIEW audit_record');
    db.exec(view.replace(`json_extract(record, '$[16]') AS decision`, `'allowed' AS decision`));
    db.close();

    const verify = runCli(['audit', 'verify', '--config', configPath]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/^BROKEN: the audit_record view, through which every reader shows the rows, is not the one the migrations made/);
    expect(verify.stderr).toBe('');
    const exported = runCli(['audit', 'export', '--format', 'jsonl', '--config', configPath]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(/^warning: the audit_record view, .* run `switchboard audit verify`\n$/);
  });

  it('a trigger on the audit tables fails verify (exit 1), naming it', async () => {
    const configPath = writeConfig({ mcpServers: {} });
    const config = loadConfigWithWarnings(configPath).config;
    await appendRows(config, ENTRIES.slice(0, 2));
    const db = new Database(databasePath(config));
    db.exec(`CREATE TRIGGER keep_quiet BEFORE INSERT ON audit_entry WHEN NEW.principal = 'mallory' BEGIN SELECT RAISE(IGNORE); END`);
    db.close();
    const verify = runCli(['audit', 'verify', '--config', configPath]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/^BROKEN: the database has triggers no migration made \("keep_quiet" on "audit_entry"\)/);
  });
});

describe('switchboard audit and db commands without a database', () => {
  it('db migrate creates the database, then finds it up to date', () => {
    const configPath = writeConfig({ mcpServers: {} });
    const file = databasePath(loadConfigWithWarnings(configPath).config);
    const first = runCli(['db', 'migrate', '--config', configPath]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^applied 8 migration\(s\):\n {2}CreateAuditLog\d+\n {2}SlimAuditIndexes\d+\n {2}AuditRecordAsJson\d+\n {2}CreateApiKeys\d+\n {2}CreateToolPins\d+\n {2}CreatePrincipalSecrets\d+\n {2}CreateAuditJournalMarks\d+\n {2}PrincipalIndexInIdOrder\d+\n/,
    );
    expect(first.stdout).toContain(`database: ${file}\n`);
    expect(existsSync(file)).toBe(true);
    const again = runCli(['db', 'migrate', '--config', configPath]);
    expect(again.stdout).toBe(`database is up to date\ndatabase: ${file}\n`);
    expect(runCli(['audit', 'verify', '--config', configPath]).stdout).toMatch(/^ok: 0 rows, chain intact/);
  });

  it('--data-dir overrides the config', () => {
    const dir = tempDir();
    const configPath = writeConfig({ mcpServers: {} });
    const r = runCli(['db', 'migrate', '--config', configPath, '--data-dir', dir]);
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, 'switchboard.sqlite'))).toBe(true);
    expect(existsSync(loadConfigWithWarnings(configPath).config.dataDir), "the config's data dir").toBe(false);
  });

  it.each([['tail'], ['export', '--format', 'jsonl'], ['stats'], ['verify']])(
    'audit %s with no database says how to make one, exit 1, no stack trace',
    (...args) => {
      const configPath = writeConfig({ mcpServers: {} });
      const file = databasePath(loadConfigWithWarnings(configPath).config);
      const r = runCli(['audit', ...args, '--config', configPath]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`switchboard: no audit database at ${file}; start the daemon once or run \`switchboard db migrate\`\n`);
      expect(r.stderr).not.toMatch(STACK_TRACE);
      expect(existsSync(file)).toBe(false);
    },
  );
});

describe('switchboard audit on a database an older Switchboard made', () => {
  it.each([['tail'], ['export', '--format', 'jsonl'], ['stats'], ['verify']])(
    'audit %s says which migrations it lacks and to run db migrate, exit 1, and leaves the file as it was',
    async (...args) => {
      const configPath = writeConfig({ mcpServers: {} });
      const file = databasePath(loadConfigWithWarnings(configPath).config);
      mkdirSync(dirname(file), { recursive: true });
      // As a build with only the first two migrations left it (rows in the audit_record table).
      const old = await openDatabase({ file, entities: AUDIT_ENTITIES, migrations: MIGRATIONS.slice(0, 2) });
      await migrate(old);
      await old.destroy();
      const before = readFileSync(file);
      const r = runCli(['audit', ...args, '--config', configPath]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^switchboard: the audit database .* is from an older Switchboard \(6 migration\(s\) not applied: AuditRecordAsJson\d+, /);
      expect(r.stderr).toContain('run `switchboard db migrate` (or start the daemon) first');
      expect(r.stderr).not.toMatch(STACK_TRACE);
      expect(readFileSync(file).equals(before)).toBe(true);
      // And once migrated, it reads.
      expect(runCli(['db', 'migrate', '--config', configPath]).code).toBe(0);
      expect(runCli(['audit', 'verify', '--config', configPath]).stdout).toMatch(/^ok: 0 rows, chain intact/);
    },
  );
});
