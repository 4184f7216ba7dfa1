import { describe, expect, it } from 'vitest';
import { runSubcommand } from './command-args.js';
import { CommandError } from './command-error.js';

const refusal = async (args: string[]): Promise<CommandError> => {
  // It throws before it returns a promise: run inside one, to catch either way.
  const error = await Promise.resolve()
    .then(() => runSubcommand('keys', args, 'USAGE', { create: async () => 0, list: async () => 0 }))
    .then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(CommandError);
  return error as CommandError;
};

describe('runSubcommand', () => {
  it('a missing command is a usage error naming the ones there are', async () => {
    expect(await refusal([])).toMatchObject({ exitCode: 2, message: 'a command is missing; try: create, list' });
  });

  it('an option where the command goes is a missing command, not an unknown one called like the option', async () => {
    // `switchboard -c FILE keys` reaches the family as `keys -c FILE`.
    expect(await refusal(['-c', 'sw.yaml'])).toMatchObject({
      exitCode: 2,
      message: "a command is missing ('-c' is an option, not a command); try: create, list",
    });
    expect((await refusal(['--config', 'sw.yaml', 'list'])).message).toMatch(/^a command is missing \('--config' is an option/);
  });

  it('an unknown word is an unknown command', async () => {
    expect(await refusal(['rotate'])).toMatchObject({ exitCode: 2, message: "unknown keys command 'rotate'; try: create, list" });
  });

  it('a misspelt command is named with the one most likely meant', async () => {
    expect(await refusal(['lsit'])).toMatchObject({ exitCode: 2, message: "unknown keys command 'lsit' (did you mean list?); try: create, list" });
    expect((await refusal(['creat'])).message).toMatch(/^unknown keys command 'creat' \(did you mean create\?\)/);
  });
});
