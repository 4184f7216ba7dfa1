import { afterEach, describe, expect, it, vi } from 'vitest';
import { commandFirst, main } from './cli.js';
import { ARGUMENT_CHECKS } from './commands/argument-checks.js';

describe('commandFirst', () => {
  it('moves the shared options given before a command family after its subcommand', () => {
    expect(commandFirst(['-c', 'sw.yaml', 'config', 'check'])).toEqual(['config', 'check', '-c', 'sw.yaml']);
    expect(commandFirst(['--config=sw.yaml', '--data-dir', 'd', 'policy', 'check', '--principal', 'x'])).toEqual([
      'policy',
      'check',
      '--config=sw.yaml',
      '--data-dir',
      'd',
      '--principal',
      'x',
    ]);
  });

  it('leaves no option in the command place of a family given no command, so the user is told the command is missing', () => {
    // `switchboard -c FILE audit` put its -c where audit's command goes, and was told
    // "'-c' is an option, not a command" for an option written where the README says it may go.
    expect(commandFirst(['-c', 'sw.yaml', 'audit'])).toEqual(['audit']);
    expect(commandFirst(['--data-dir', 'd', 'keys'])).toEqual(['keys']);
  });

  it('leaves everything else as it is: start, options after the command, a dangling option', () => {
    for (const argv of [['-c', 'sw.yaml', 'start'], ['config', 'check', '-c', 'x'], ['-c'], ['--port', '1', 'config', 'check'], []]) {
      expect(commandFirst(argv)).toEqual(argv);
    }
  });
});

/** What `switchboard <argv>` prints and exits with, run in this process (nothing is opened for these). */
async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    stdout += String(chunk);
    (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const code = await main(argv);
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

/** The commands a usage text shows, as `family subcommand`. */
const shown = (usage: string) => [...usage.matchAll(/^ {2}switchboard ([a-z]+ [a-z]+)/gm)].map((m) => m[1]);

describe('--help after a command family or a command', () => {
  afterEach(() => vi.restoreAllMocks());

  it('after a family, prints only its commands, not the whole usage', async () => {
    const keys = await run(['keys', '--help']);
    expect(keys.code).toBe(0);
    expect(keys.stdout).toMatch(/^Usage:\n {2}switchboard keys create --name NAME/);
    expect(shown(keys.stdout)).toEqual(['keys create', 'keys list', 'keys rotate', 'keys revoke']);
    expect(keys.stdout).not.toMatch(/FILTERS|switchboard start/);
    expect(keys.stdout).toMatch(/--config FILE and --data-dir DIR/);
  });

  it('after a command, prints only that command, with the notes it needs', async () => {
    const create = await run(['keys', 'create', '--help']);
    expect([create.code, shown(create.stdout)]).toEqual([0, ['keys create']]);
    const exported = await run(['audit', 'export', '--help']);
    expect([exported.code, shown(exported.stdout)]).toEqual([0, ['audit export']]);
    expect(exported.stdout).toMatch(/^FILTERS: --since WHEN/m);
  });

  it.each(Object.entries(ARGUMENT_CHECKS))('%s: the family and each of its commands have their part', async (family, commands) => {
    expect(shown((await run([family, '-h'])).stdout)).toEqual(Object.keys(commands).map((c) => `${family} ${c}`));
    for (const command of Object.keys(commands)) {
      const help = await run([family, command, '--help']);
      expect([help.code, shown(help.stdout)], `${family} ${command}`).toEqual([0, [`${family} ${command}`]]);
    }
  });

  it('the whole usage stays the answer to switchboard --help', async () => {
    expect(shown((await run(['--help'])).stdout)).toContain('audit tail');
    expect(shown((await run(['--help'])).stdout)).toContain('keys create');
  });
});

describe('a family without a command', () => {
  afterEach(() => vi.restoreAllMocks());

  it('audit and db name their commands, as keys and policy do, rather than print the whole usage', async () => {
    expect(await run(['audit'])).toEqual({ code: 2, stdout: '', stderr: 'switchboard: a command is missing; try: tail, export, stats, verify, checkpoint, digest\n' });
    expect(await run(['db'])).toEqual({ code: 2, stdout: '', stderr: 'switchboard: a command is missing; try: migrate, backup\n' });
    expect((await run(['keys'])).stderr).toBe('switchboard: a command is missing; try: create, list, rotate, revoke\n');
  });
});

describe('audit tail -n', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a negative number is refused by what -n takes, not with parseArgs\' "argument is ambiguous"', async () => {
    for (const argv of [['-n', '-1'], ['--lines', '-1'], ['--lines=-1']]) {
      expect(await run(['audit', 'tail', ...argv])).toEqual({
        code: 2,
        stdout: '',
        stderr: "switchboard: -n/--lines '-1': expected a whole number of rows from 1 to 100000\n",
      });
    }
  });

  it('an option where its value should be says that the value is missing', async () => {
    const r = await run(['audit', 'tail', '-n', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("switchboard: -n needs a number of rows, e.g. -n 20 ('--json' is read as an option; a value that starts with '-' is written --lines=VALUE)\n");
  });
});
