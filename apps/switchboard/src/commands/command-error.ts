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

/**
 * Runs a command; a CommandError becomes its message on stderr and its exit code. What it
 * printed is waited for: stdout that fails (a full disk, `> /dev/full`) is a one-line error
 * and exit 1, not Node's stack trace for an unhandled 'error' event; a reader that went away
 * (`| true`, `| head -0`) leaves the command's own exit code, as `audit export` and `tail` do.
 */
export async function runReporting(command: () => Promise<number>): Promise<number> {
  let stdoutFailure: NodeJS.ErrnoException | undefined;
  const onStdoutError = (err: NodeJS.ErrnoException) => (stdoutFailure ??= err);
  process.stdout.on('error', onStdoutError);
  let code: number;
  let reported = false;
  try {
    code = await command();
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    process.stderr.write(`switchboard: ${err.message}\n`);
    code = err.exitCode;
    reported = true; // export and tail say themselves when their output failed
  }
  // An empty write's callback runs once everything written before it is out, or has failed.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  if (reported || stdoutFailure === undefined || stdoutFailure.code === 'EPIPE') return code;
  process.stderr.write(`switchboard: writing to stdout failed: ${stdoutFailure.message}\n`);
  return 1;
}
