import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { DATABASE_FILE } from '@switchboard/persistence';
import { usageError } from './command-error.js';

/**
 * Opening `--output` truncates it: pointed at the database (a slip of the tab key), an export
 * emptied the whole audit log before reading a row; at its -wal, the journal or a key, it
 * would lose rows or secrets as surely. Nothing an export or a backup writes belongs in the
 * data dir, so a path in it (followed through symlinks), or another name of the database's
 * own file (a hard link), is refused before anything is opened. `why` ends the message.
 */
export function refuseDataDirOutput(output: string, dataDir: string, why: string): void {
  const dir = realOrUndefined(dataDir);
  if (dir === undefined) return;
  const target = realOrUndefined(output) ?? join(realOrUndefined(dirname(resolve(output))) ?? dirname(resolve(output)), basename(output));
  const inDataDir = target === dir || target.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
  if (inDataDir || sameFile(output, join(dataDir, DATABASE_FILE))) {
    throw usageError(`--output ${output} is in the data directory ${dataDir}${why}`);
  }
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}
