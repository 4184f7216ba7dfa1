import { describe, expect, it } from 'vitest';
import { USAGE, parseStartArgs } from '../cli.js';
import { ARGUMENT_CHECKS } from './argument-checks.js';
import { usagePart } from './usage-part.js';

/** Why the command refuses these arguments; undefined when it takes them. */
function refusal(check: (args: string[]) => unknown, args: string[]): string | undefined {
  try {
    check(args);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Every command with the options its --help names, and what reads its arguments. */
const commands: [string, string[], (args: string[]) => unknown][] = [
  ['start', ['--config', '--port', '--host', '--data-dir'], parseStartArgs],
  ...Object.entries(ARGUMENT_CHECKS).flatMap(([family, subcommands]) =>
    Object.entries(subcommands).map(([sub, check]): [string, string[], (args: string[]) => unknown] => {
      const help = usagePart(USAGE, `${family} ${sub}`);
      return [`${family} ${sub}`, [...new Set(help.match(/--[a-z][a-z-]*/g) ?? [])], check];
    }),
  ),
];

describe('an option given without its value', () => {
  it('is said in Switchboard\'s words, naming what the option takes, as typed', () => {
    const tail = ARGUMENT_CHECKS.audit.tail;
    expect(refusal(tail, ['--lines'])).toBe('--lines needs a number of rows, e.g. --lines 20');
    expect(refusal(tail, ['-n'])).toBe('-n needs a number of rows, e.g. -n 20');
    expect(refusal(tail, ['--json', '-fn'])).toBe('-n needs a number of rows, e.g. -n 20');
    expect(refusal(parseStartArgs, ['start', '-p'])).toBe('-p needs a port number, e.g. -p 8780');
  });

  it.each(commands)('%s: no option that takes a value is left to parseArgs\' words', (_command, options, check) => {
    for (const option of options) {
      const said = refusal(check, [option]) ?? '';
      expect(said, option).not.toMatch(/argument missing|<value>/);
      // One that takes a value says what, with an example; a flag is refused (or not) for other reasons.
      if (said.startsWith(`${option} needs a`)) expect(said, option).toMatch(new RegExp(`^${option} needs .+, e\\.g\\. ${option} \\S`));
    }
  });
});
