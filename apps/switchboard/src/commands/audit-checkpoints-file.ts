import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { checkpointIn, type Checkpoint } from '@switchboard/audit';
import { CommandError } from './command-error.js';

/** What reading a checkpoints file found besides the checkpoints it yields. */
export interface CheckpointsFileTally {
  /** Tags that are no readable v1 checkpoint where one is read. */
  unreadable: number;
}

/**
 * Fails now, before the database is opened, if `file` cannot be read; else its size now.
 * Only that much is read: a checkpoint the daemon logs later names a row committed after
 * verify's read snapshot began, which the snapshot does not hold and would call a cut tail.
 * `whereFrom` (whereCheckpointsComeFrom) follows the error for a file that does not exist:
 * a new user has usually not found the checkpoints yet.
 */
export async function readableSize(file: string, whereFrom: string): Promise<number> {
  try {
    await (await open(file, 'r')).close();
    return (await stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new CommandError(`the checkpoints file ${file} does not exist. ${whereFrom}`);
    throw new CommandError(`cannot read the checkpoints file ${file}: ${(err as Error).message}`);
  }
}

/**
 * Where checkpoints come from, for a user whose file has none: the daemon's log (with the
 * interval this config sets; none when this config disables the log or the checkpoints), or
 * `audit checkpoint` run now, with the same --config and --data-dir as this command so that
 * it reads the same database. One line (CommandError).
 */
export function whereCheckpointsComeFrom(
  audit: { enabled: boolean; checkpointEvery: string },
  file: string,
  options: { config?: string; 'data-dir'?: string },
): string {
  const given = (['config', 'data-dir'] as const).flatMap((name) => (options[name] === undefined ? [] : [`--${name}`, shellWord(options[name])]));
  const write = ['switchboard audit checkpoint', ...given, '>>', shellWord(file)].join(' ');
  // A disabled log opens no writer and so no checkpoint job, whatever checkpointEvery says.
  if (!audit.enabled) {
    return (
      'The audit log is disabled in this config (audit.enabled: false), so the daemon records no calls and logs no checkpoints. ' +
      `For the rows recorded before, write one with: ${write}`
    );
  }
  const every = audit.checkpointEvery;
  if (every === 'off') return `audit.checkpointEvery is off in this config, so the daemon logs none. Write one with: ${write}`;
  return (
    `Checkpoints come from the daemon: it logs one every audit.checkpointEvery (${every}) while calls are recorded, at log.level info, ` +
    "as 'audit: checkpoint switchboard-audit-checkpoint v1 ...' in its log; give that log (or the file your log shipper keeps) to --checkpoint. " +
    `Or write one now: ${write}`
  );
}

/** `text` as one POSIX shell word: as it is when nothing in it is special, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * The checkpoints in `file`, one line at a time: a file of checkpoint lines, or a log the
 * daemon wrote (or a shipper collected) with them among other lines, up to `size` bytes. Only
 * one line is held at a time, however large the file.
 */
export async function* checkpointsOfFile(file: string, size: number, tally: CheckpointsFileTally): AsyncGenerator<Checkpoint> {
  if (size === 0) return;
  const lines = createInterface({ input: createReadStream(file, { end: size - 1 }), crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      const { checkpoint, unreadable } = checkpointIn(line);
      tally.unreadable += unreadable;
      if (checkpoint) yield checkpoint;
    }
  } catch (err) {
    throw new CommandError(`reading the checkpoints file ${file} failed: ${(err as Error).message}`);
  } finally {
    lines.close();
  }
}
