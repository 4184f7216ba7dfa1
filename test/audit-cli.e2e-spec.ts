import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AUDIT_ENTITIES, AuditQuery, type AuditRow } from '@switchboard/audit';
import { loadConfigWithWarnings, type GatewayConfig } from '@switchboard/config';
import { migrate, openDatabase } from '@switchboard/persistence';
import { MIGRATIONS } from '@switchboard/migrations';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { databasePath, openMigrated } from '../apps/switchboard/src/audit-store.js';
import { appendRows, entry, ENTRIES } from './support/audit-samples.js';
import { eventually, SWITCHBOARD_BIN, tempDir, writeConfig } from './support/daemon.js';
import { cliRunsTimeout, runCli } from './support/cli.js';

/**
 * `switchboard db` and `switchboard audit` against a real SQLite file: rows are written by
 * the real AuditWriter, read back by the compiled CLI, and its output parsed and compared
 * with what the log holds. (`audit verify` with pruned rows and a tampered schema:
 * audit-verify.e2e-spec.ts.)
 */

const STACK_TRACE = /\bat \S+ \(|node:internal|\.[cm]?[jt]s:\d+/;

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
      new RegExp(`^${new Date(rows[0].at).toISOString()}  allowed  default-allow  ok  loopback:alice  tools/call  fx__echo  fx  13ms  \\{"text":"a,b`),
    );
    // The caller as stats and --principal name it: these rows' principals came over loopback.
    // The rule beside the decision: which one refused, not only that something did.
    expect(lines[2]).toContain('  denied  catalog:unknown-tool  -32602  loopback:alice  tools/call  fx__nope  -  13ms  {"text":"hi"}');
    expect(lines[4]).toContain('  allowed  default-allow  error:-32603  loopback:=HYPERLINK(');

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

  it('a read that finds nothing names on stderr each filter no row of the log matches, with the value meant; the output stays as it was', () => {
    const exported = runCli(withConfig('audit', 'export', '--format', 'jsonl', '--method', 'tools/calls', '--principal', 'alise'));
    expect([exported.code, exported.stdout]).toEqual([0, '']);
    expect(exported.stderr).toBe(
      "note: no row has principal 'alise' (did you mean alice?)\nnote: no row has method 'tools/calls' (did you mean tools/call?)\n" +
        'note: exported 0 rows; resume with --after-id 5\n',
    );
    const tail = runCli(withConfig('audit', 'tail', '--upstream', 'FX'));
    expect([tail.code, tail.stdout, tail.stderr]).toEqual([0, '', "note: no row has upstream 'FX' (did you mean fx?)\n"]);
    const stats = runCli(withConfig('audit', 'stats', '--json', '--tool', 'fx__ech'));
    expect(JSON.parse(stats.stdout)).toMatchObject({ rows: 0 });
    expect(stats.stderr).toBe("note: no tools/call row has tool 'fx__ech' (did you mean fx__echo?)\n");
    // Filters that each match rows, only not together: nothing found, nothing to note.
    const together = runCli(withConfig('audit', 'export', '--format', 'jsonl', '--principal', 'bob', '--decision', 'denied'));
    expect([together.code, together.stdout, together.stderr]).toEqual([0, '', 'note: exported 0 rows; resume with --after-id 5\n']);
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
      /^2 rows: 2 allowed, 0 denied, 0 limited, 0 unauthenticated, 0 refused\n2 tool calls \(tools\/call rows\): 1 error, 0 cancelled, 0 denials \(not let through: denied, limited, unauthenticated or refused\)\n/,
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
    [withConfig('audit', 'tail', '-n', '0'), /^switchboard: -n\/--lines '0': expected a whole number of rows from 1 to 100000\n$/],
    // Not parseArgs' "argument is ambiguous ... use '--lines=-XYZ'": what -n takes, and that this is not it.
    [withConfig('audit', 'tail', '-n', '-1'), /^switchboard: -n\/--lines '-1': expected a whole number of rows from 1 to 100000\n$/],
    // Not parseArgs' "Option '-n, --lines <value>' argument missing": what the option takes.
    [['audit', 'tail', '--config', configPath, '--lines'], /^switchboard: --lines needs a number of rows, e\.g\. --lines 20\n$/],
    [['audit', 'tail', '--config', configPath, '-n'], /^switchboard: -n needs a number of rows, e\.g\. -n 20\n$/],
    // The value left out before another option: the same words, and why that option is no value.
    [withConfig('audit', 'tail', '-n'), /^switchboard: -n needs a number of rows, e\.g\. -n 20 \('--config' is read as an option; a value that starts with '-' is written --lines=VALUE\)\n$/],
    [withConfig('audit', 'tail', '--frobnicate'), /^switchboard: Unknown option '--frobnicate'/],
    [withConfig('audit', 'rewrite'), /^switchboard: unknown audit command 'rewrite'; try: tail, export, stats, verify/],
    [['db'], /^switchboard: a command is missing; try: migrate, backup\n$/],
    [['audit'], /^switchboard: a command is missing; try: tail, export, stats, verify, checkpoint, digest\n$/],
    // An option in the command's place is no command ...
    [['audit', '--config', configPath, 'tail'], /^switchboard: a command is missing \('--config' is an option, not a command\); try: tail, export,/],
    [['db', '--data-dir', 'elsewhere', 'migrate'], /^switchboard: a command is missing \('--data-dir' is an option, not a command\); try: migrate, backup\n$/],
    // ... but one written before the family, where the README says it may go, is not blamed.
    [['-c', configPath, 'audit'], /^switchboard: a command is missing; try: tail, export, stats, verify, checkpoint, digest\n$/],
    [['-c', configPath, 'keys'], /^switchboard: a command is missing; try: create, list, rotate, revoke\n$/],
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

describe('switchboard audit and db commands without a database', () => {
  it('db migrate creates the database, then finds it up to date', () => {
    const configPath = writeConfig({ mcpServers: {} });
    const file = databasePath(loadConfigWithWarnings(configPath).config);
    const first = runCli(['db', 'migrate', '--config', configPath]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^applied 9 migration\(s\):\n {2}CreateAuditLog\d+\n {2}SlimAuditIndexes\d+\n {2}AuditRecordAsJson\d+\n {2}CreateApiKeys\d+\n {2}CreateToolPins\d+\n {2}CreatePrincipalSecrets\d+\n {2}CreateAuditJournalMarks\d+\n {2}PrincipalIndexInIdOrder\d+\n {2}ApiKeyRotation\d+\n/,
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

  it.each([['tail'], ['export', '--format', 'jsonl'], ['stats'], ['verify']])(
    'audit %s on a file that is no SQLite database names the file, exit 1, and leaves it as it was',
    (...args) => {
      const configPath = writeConfig({ mcpServers: {} });
      const file = databasePath(loadConfigWithWarnings(configPath).config);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, 'not a database, only text that is long enough to be read as a header\n');
      const r = runCli(['audit', ...args, '--config', configPath]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`switchboard: cannot open the audit database ${file}: file is not a database\n`);
      expect(readFileSync(file, 'utf8')).toBe('not a database, only text that is long enough to be read as a header\n');
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
      expect(r.stderr).toMatch(/^switchboard: the audit database .* is from an older Switchboard \(7 migration\(s\) not applied: AuditRecordAsJson\d+, /);
      expect(r.stderr).toContain('run `switchboard db migrate` (or start the daemon) first');
      expect(r.stderr).not.toMatch(STACK_TRACE);
      expect(readFileSync(file).equals(before)).toBe(true);
      // And once migrated, it reads.
      expect(runCli(['db', 'migrate', '--config', configPath]).code).toBe(0);
      expect(runCli(['audit', 'verify', '--config', configPath]).stdout).toMatch(/^ok: 0 rows, chain intact/);
    },
  );
});
