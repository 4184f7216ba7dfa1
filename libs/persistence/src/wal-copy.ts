import { readFileSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';

/**
 * Why a read-only connection could not read a WAL-mode file, when the reason is WAL itself.
 * SQLite reads such a file only through a `-shm` file beside it (and its `-wal`), which it
 * creates itself, even for a read-only connection; in a directory it cannot write (a
 * read-only copy, an archive) that fails with SQLITE_READONLY_DIRECTORY, or SQLITE_CANTOPEN
 * when a `-wal` is there without its `-shm`. better-sqlite3 takes no `immutable` URI, so:
 *
 * - `whole-file`: no `-wal` holds anything, so the file alone is the whole database, and it
 *   can be read from an image of it in memory (walCopyImage);
 * - `wal-needs-shm`: the `-wal` holds changes the file lacks, and only SQLite's own WAL
 *   reader, which needs the `-shm`, can read them.
 */
export function walCopyProblem(err: unknown, file: string): 'whole-file' | 'wal-needs-shm' | undefined {
  const code = (err as { code?: unknown })?.code;
  if (code !== 'SQLITE_READONLY_DIRECTORY' && code !== 'SQLITE_CANTOPEN') return undefined;
  if (sizeOf(`${file}-shm`) !== undefined) return undefined; // not the missing -shm, then
  return (sizeOf(`${file}-wal`) ?? 0) === 0 ? 'whole-file' : 'wal-needs-shm';
}

export function walNeedsShmMessage(file: string): string {
  return (
    `${file}-wal holds changes not yet in ${file}, and SQLite reads them only through ${file}-shm, which it cannot ` +
    'create in a directory it cannot write; copy both files to a writable directory and read the copy there'
  );
}

/**
 * The file read into memory, marked as a rollback-journal database (header bytes 18 and 19:
 * 1, not WAL's 2) so that SQLite reads it without a `-wal` or `-shm`; the image is never
 * written back. No process writes the file meanwhile: a writer would have made a `-wal`
 * beside it. It costs the file's size in memory, once per command.
 */
export function walCopyImage(file: string): Buffer {
  let image: Buffer;
  try {
    image = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_FS_FILE_TOO_LARGE') throw err;
    throw new Error(`${file} is too large to read into memory (over 2 GiB), and SQLite cannot read it in place, in a directory it cannot write; copy it to a writable directory and read the copy there`, { cause: err });
  }
  image[18] = 1;
  image[19] = 1;
  return image;
}

/** better-sqlite3 as TypeORM constructs it (`new driver(file, options)`), on the image instead of the file. */
export function imageDriver(image: Buffer): (file: string, options: Database.Options) => Database.Database {
  return function ImageOfFile(_file: string, options: Database.Options) {
    return new Database(image, { ...options, fileMustExist: false });
  };
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}
