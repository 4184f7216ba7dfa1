import { describe, expect, it } from 'vitest';
import { commandFirst } from './cli.js';

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
