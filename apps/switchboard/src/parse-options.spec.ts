import { isAbsolute } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseOptions } from './parse-options.js';

const options = {
  since: { type: 'string' },
  tag: { type: 'string', multiple: true },
  json: { type: 'boolean' },
} as const;

describe('parseOptions', () => {
  it('refuses a string option given twice, in either spelling', () => {
    expect(() => parseOptions({ args: ['--since', '1h', '--since', '2h'], options })).toThrow(/'--since' was given more than once/);
    expect(() => parseOptions({ args: ['--since=1h', '--since', '2h'], options })).toThrow(/more than once/);
  });

  it('names a repeated option as the user typed it: the short form, or both forms when they differ', () => {
    const withShort = { ...options, lines: { type: 'string', short: 'n' }, json: { type: 'boolean', short: 'j' } } as const;
    const refusal = (args: string[]) => () => parseOptions({ args, options: withShort });
    expect(refusal(['-n', '1', '-n', '2'])).toThrow(/^Option '-n' was given more than once$/);
    expect(refusal(['-n1', '-jn2'])).toThrow(/^Option '-n' was given more than once$/);
    expect(refusal(['--lines', '1', '--lines=2'])).toThrow(/^Option '--lines' was given more than once$/);
    expect(refusal(['-n', '1', '--lines', '2'])).toThrow(/^Option '-n' and '--lines' name the same option: give it once$/);
    expect(refusal(['--lines=1', '-n', '2'])).toThrow(/^Option '--lines' and '-n' name the same option: give it once$/);
  });

  it('lets options declared multiple, and booleans, repeat', () => {
    const { values } = parseOptions({ args: ['--tag', 'a', '--tag', 'b', '--json', '--json', '--since', '1h'], options });
    expect(values).toEqual({ tag: ['a', 'b'], json: true, since: '1h' });
  });

  it('still refuses unknown options and stray words', () => {
    expect(() => parseOptions({ args: ['--nope'], options })).toThrow(/^Unknown option '--nope'$/);
    expect(() => parseOptions({ args: ['word'], options })).toThrow(/positional/);
  });

  it('names the option most likely meant by an unknown one, and nothing of positional arguments', () => {
    expect(() => parseOptions({ args: ['--snice', '1h'], options })).toThrow(/^Unknown option '--snice' \(did you mean --since\?\)$/);
    expect(() => parseOptions({ args: ['--jsno'], options })).toThrow(/^Unknown option '--jsno' \(did you mean --json\?\)$/);
    // Where words may follow (start, keys revoke NAME), parseArgs adds how to pass '--confg' as one: not what was meant.
    const config = { config: { type: 'string' } } as const;
    expect(() => parseOptions({ args: ['--confg', 'sw.yaml'], options: config, allowPositionals: true })).toThrow(
      /^Unknown option '--confg' \(did you mean --config\?\)$/,
    );
    expect(() => parseOptions({ args: ['--frobnicate'], options: config, allowPositionals: true })).toThrow(/^Unknown option '--frobnicate'$/);
    expect(() => parseOptions({ args: ['--since=1h', '-x'], options })).toThrow(/^Unknown option '-x'$/);
  });

  it('takes a negative number after a string option as its value, for the command to judge', () => {
    const withShort = { ...options, lines: { type: 'string', short: 'n' } } as const;
    expect(parseOptions({ args: ['-n', '-1'], options: withShort }).values.lines).toBe('-1');
    expect(parseOptions({ args: ['--lines', '-2.5', '--json'], options: withShort }).values).toEqual({ lines: '-2.5', json: true });
    // A repeat is still named as typed; after `--` nothing is an option's value.
    expect(() => parseOptions({ args: ['-n', '-1', '-n', '2'], options: withShort })).toThrow(/^Option '-n' was given more than once$/);
    expect(() => parseOptions({ args: ['--', '-n', '-1'], options: withShort })).toThrow(/positional/);
  });

  it('says in one line that an option followed by another lacks its value', () => {
    const withShort = { ...options, lines: { type: 'string', short: 'n' } } as const;
    expect(() => parseOptions({ args: ['-n', '--json'], options: withShort })).toThrow(
      /^-n needs a number of rows, e\.g\. -n 20 \('--json' is read as an option; a value that starts with '-' is written --lines=VALUE\)$/,
    );
    expect(() => parseOptions({ args: ['--since', '-x'], options })).toThrow(/^--since needs a date, a time or a duration ago, e\.g\. --since 24h \('-x' is read as an option;/);
  });

  it('makes the options that name files absolute, refuses an empty one, and leaves an empty --data-dir for the command', () => {
    const fileOptions = { ...options, config: { type: 'string' }, output: { type: 'string' }, file: { type: 'string' }, 'data-dir': { type: 'string' } } as const;
    const { values } = parseOptions({ args: ['--config', 'sb.yaml', '--output=out.csv', '--data-dir', '', '--since', 'x'], options: fileOptions });
    expect(isAbsolute(values.config!) && values.config!.endsWith('/sb.yaml')).toBe(true);
    expect(isAbsolute(values.output!)).toBe(true);
    expect(values['data-dir']).toBe('');
    expect(values.since).toBe('x');
    expect(() => parseOptions({ args: ['--file', ''], options: fileOptions })).toThrow(/^--file is empty: it needs a policy file, e\.g\. --file policy\.yaml$/);
  });
});
