import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { checkpointsIn, type Checkpoint } from '@switchboard/audit';
import { CommandError } from './command-error.js';

/** What reading a checkpoints file found besides the checkpoints it yields. */
export interface CheckpointsFileTally {
  checkpoints: number;
  /** Tags that start no readable v1 checkpoint. */
  unreadable: number;
}

/** Fails now, before the database is opened, if `file` cannot be read. */
export async function assertReadable(file: string): Promise<void> {
  try {
    await (await open(file, 'r')).close();
  } catch (err) {
    throw new CommandError(`cannot read the checkpoints file ${file}: ${(err as Error).message}`);
  }
}

/**
 * The checkpoints in `file`, one line at a time: a file of checkpoint lines, or a log the
 * daemon wrote (or a shipper collected) with them among other lines. Only one line is held
 * at a time, however large the file.
 */
export async function* checkpointsOfFile(file: string, tally: CheckpointsFileTally): AsyncGenerator<Checkpoint> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      const found = checkpointsIn(line);
      tally.unreadable += found.unreadable;
      tally.checkpoints += found.checkpoints.length;
      yield* found.checkpoints;
    }
  } catch (err) {
    throw new CommandError(`reading the checkpoints file ${file} failed: ${(err as Error).message}`);
  } finally {
    lines.close();
  }
}
