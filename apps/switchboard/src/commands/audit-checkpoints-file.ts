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
 */
export async function readableSize(file: string): Promise<number> {
  try {
    await (await open(file, 'r')).close();
    return (await stat(file)).size;
  } catch (err) {
    throw new CommandError(`cannot read the checkpoints file ${file}: ${(err as Error).message}`);
  }
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
