import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export const JOURNAL_SUFFIX = '.journal';
export const LOCK_SUFFIX = '.lock';
const NEWLINE = 0x0a;

/** The first line of every generation: which journal, which generation. */
export interface JournalHeader {
  switchboardAuditJournal: 1;
  journal: string;
  generation: number;
}

/**
 * One process's strict-mode journal (ADR 007): an append-only file where each batch of rows
 * is written, one `write` for the batch, before its calls are answered. The rows reach the
 * database later in large commits; each commit records how many of the journal's rows it
 * holds (audit_journal_mark), and once every row is in, the file is emptied for the next
 * generation. A process that dies leaves its journal behind, and the next start moves what
 * the database does not have yet (recover-journals.ts).
 *
 * A row is its record text with id 0 (recordText), one per line; the id and hash are
 * assigned when it is moved, under the database's write lock, as for any other row.
 *
 * Whether the owner is alive is told by a lock, not by a pid: the owner holds an exclusive
 * SQLite lock on `<id>.lock` (an fcntl lock, which the kernel drops when the process dies,
 * in whatever container it ran).
 */
export class JournalFile {
  /** The generation being written; a header line starts each. */
  generation = 1;
  /** Rows written in this generation. */
  rows = 0;
  private size = 0;
  private headerDue = true;
  /** A failed write could not be cut back: nothing more is appended until the file is emptied. */
  private torn = false;
  private scratch = Buffer.allocUnsafe(64 * 1024);

  private constructor(
    readonly name: string,
    readonly path: string,
    private readonly fd: number,
    private readonly lock: LockHandle,
  ) {}

  /** Creates this process's journal in `dir` (the lock first: a journal is never without a live owner's lock). */
  static create(dir: string): JournalFile {
    const name = `${process.pid}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const path = join(dir, name + JOURNAL_SUFFIX);
    let lock: LockHandle | undefined;
    let fd: number;
    try {
      // Owner only, like the database: the journal holds the same rows.
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      lock = takeLock(join(dir, name + LOCK_SUFFIX));
      if (!lock) throw new Error('its lock is held by another process');
      fd = openSync(path, 'a', 0o600);
    } catch (err) {
      lock?.release();
      // Named, so that whoever reads "unable to open database file" knows it is this directory.
      throw new Error(`cannot create the audit journal ${path}: ${(err as Error).message}`);
    }
    const journal = new JournalFile(name, path, fd, lock);
    journal.writeHeader();
    return journal;
  }

  /**
   * Appends one row per line (each a record text, without its newline) in one `write`.
   * Throws the file system's error (ENOSPC, EIO); a failed write is cut back off the file, so
   * the rows after it still follow whole lines.
   */
  write(lines: readonly string[]): void {
    if (this.torn) throw new Error('audit journal: an earlier write could not be cut back; waiting for the next commit to empty it');
    if (this.headerDue) this.writeHeader();
    this.append(lines);
    this.rows += lines.length;
  }

  /** Empties the file and starts the next generation: every row written so far is in the database. */
  rotate(): void {
    ftruncateSync(this.fd, 0);
    this.size = 0;
    this.torn = false;
    this.generation += 1;
    this.rows = 0;
    this.headerDue = true;
    this.writeHeader();
  }

  /**
   * Closes the file. `remove`: every row is in the database, so the journal and its lock
   * go; otherwise the journal stays for the next start to move, and so does its lock file
   * (unlocked): a journal without one is left alone (see journalOwner).
   */
  close(remove: boolean): void {
    closeSync(this.fd);
    if (remove) rmSync(this.path, { force: true });
    this.lock.release({ keepFile: !remove });
  }

  private writeHeader(): void {
    const header: JournalHeader = { switchboardAuditJournal: 1, journal: this.name, generation: this.generation };
    this.append([JSON.stringify(header)]);
    this.headerDue = false;
  }

  private append(lines: readonly string[]): void {
    // Each line is encoded straight into a buffer kept for the next write, its newline after
    // it: no joined copy of the batch, no fresh buffer, no second pass to count bytes.
    let most = 0;
    for (let i = 0; i < lines.length; i++) most += lines[i].length * 3 + 1;
    if (most > this.scratch.length) this.scratch = Buffer.allocUnsafe(most);
    let bytes = 0;
    for (let i = 0; i < lines.length; i++) {
      bytes += this.scratch.write(lines[i], bytes);
      this.scratch[bytes++] = NEWLINE;
    }
    try {
      // A regular file takes the whole buffer unless the disk fills or fails midway. A short
      // write says only that it stopped: writing the rest gets the reason (ENOSPC, EFBIG, EIO).
      for (let written = 0; written < bytes; ) {
        const more = writeSync(this.fd, this.scratch, written, bytes - written);
        if (more === 0) throw Object.assign(new Error(`short write to the audit journal (${written} of ${bytes} bytes)`), { code: 'EIO' });
        written += more;
      }
      this.size += bytes;
    } catch (err) {
      try {
        ftruncateSync(this.fd, this.size);
      } catch {
        this.torn = true;
      }
      throw err;
    }
  }
}

/**
 * The journal a writer with these settings uses: strict mode on `synchronous: normal` only.
 * Relaxed mode answers without waiting for anything; under `full` an answer waits for its
 * commit's fsync, which a journal without one could not match.
 */
export function journalFor(settings: { mode: 'strict' | 'relaxed'; synchronous: 'normal' | 'full' }, dir: string): JournalFile | undefined {
  return settings.mode === 'strict' && settings.synchronous === 'normal' ? JournalFile.create(dir) : undefined;
}

/**
 * Whether the process that owns a journal is running, as its lock says: `gone` when nobody
 * holds the lock, `running` when it is held. `unknown` when there is no lock file: a live
 * owner's lock is on a file that can be removed from under it (an operator clearing
 * "stale" locks, a tmp cleaner), and a new lock file would be free at once, so a missing
 * one is never taken to mean the owner is gone: that journal is left alone (a stopped
 * owner keeps its lock file with a journal it leaves behind). Creates nothing and takes
 * nothing, for readers that must not change the data dir.
 */
export function journalOwner(lockPath: string): 'running' | 'gone' | 'unknown' {
  if (!existsSync(lockPath)) return 'unknown';
  let db: Database.Database | undefined;
  try {
    db = new Database(lockPath, { timeout: 0, fileMustExist: true });
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('ROLLBACK');
    return 'gone';
  } catch {
    return 'running'; // held (SQLITE_BUSY), or removed by its owner meanwhile
  } finally {
    db?.close();
  }
}

/** The process id a journal's name starts with (`<pid>-<time>-<random>`), for messages. */
export function journalPid(name: string): string {
  return name.split('-')[0];
}

export interface LockHandle {
  /** `keepFile`: a journal it guards stays behind, and a journal without its lock file is left alone. */
  release(options?: { keepFile?: boolean }): void;
}

/**
 * An exclusive lock on `path` held until release() or the process's end, or undefined if
 * another process holds it. SQLite's own file locking, so that it works wherever SQLite does.
 */
export function takeLock(path: string): LockHandle | undefined {
  // Created owner-only first, like everything else in the data dir: SQLite would create it
  // under the umask. Empty, but its name says which journal is alive.
  closeSync(openSync(path, 'a', 0o600));
  const db = new Database(path, { timeout: 0 });
  try {
    // No rollback journal: nothing is ever written here, and a crash should leave no file behind.
    db.pragma('journal_mode = MEMORY');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    throw err;
  }
  return {
    release({ keepFile = false } = {}) {
      db.close();
      if (!keepFile) rmSync(path, { force: true });
    },
  };
}
