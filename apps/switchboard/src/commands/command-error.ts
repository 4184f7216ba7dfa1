/**
 * A failure the user should see as one line, without a stack trace. Exit codes follow the
 * CLI's contract: 1 runtime failure, 2 bad usage or bad config.
 */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

export const usageError = (message: string): CommandError => new CommandError(message, 2);

/** Runs a command; a CommandError becomes its message on stderr and its exit code. */
export async function runReporting(command: () => Promise<number>): Promise<number> {
  try {
    return await command();
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    process.stderr.write(`switchboard: ${err.message}\n`);
    return err.exitCode;
  }
}
