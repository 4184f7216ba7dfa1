import { statSync } from 'node:fs';
import type { AuditEntry } from '../audit.types.js';
import type { ChainHead } from '../chain/chain-head.js';
import type { JournalMark } from '../journal/journal-mark.js';
import type { Committer } from './committer.js';

/**
 * The files the audit log writes to, as they were when it opened them. SQLite and the
 * journal write through open descriptors: when someone deletes the data directory (or
 * replaces the database) under a running daemon, every later commit goes on "succeeding"
 * into a file no one can ever open again, and every row is lost without an error. Checked
 * by device and inode before each commit: two stats per commit, and commits come in batches.
 */
export class FilesInPlace {
  private readonly files: { path: string; identity: string }[];

  constructor(paths: readonly string[]) {
    this.files = paths.flatMap((path) => {
      const identity = identityOf(path);
      return identity === undefined ? [] : [{ path, identity }];
    });
  }

  /** What is wrong with the files, in words; undefined while they are the ones opened. */
  problem(): string | undefined {
    for (const { path, identity } of this.files) {
      const now = identityOf(path);
      if (now === undefined) return `${path} was deleted while the daemon ran; restart it to open the log again`;
      if (now !== identity) return `${path} was replaced by another file while the daemon ran; restart it to open the log again`;
    }
    return undefined;
  }
}

/** The log's files are gone: the commit is refused, and strict mode refuses calls (ADR 007). */
export class AuditFilesGoneError extends Error {
  readonly code = 'SWITCHBOARD_AUDIT_FILES_GONE';
}

/** `inner`, except that no commit is made while the files are not the ones opened. */
export function committingInPlace(inner: Committer, files: FilesInPlace): Committer {
  return {
    commit(entries: readonly AuditEntry[], mark?: JournalMark): Promise<ChainHead> {
      const problem = files.problem();
      return problem === undefined ? inner.commit(entries, mark) : Promise.reject(new AuditFilesGoneError(problem));
    },
    close: () => inner.close(),
  };
}

function identityOf(path: string): string | undefined {
  try {
    const s = statSync(path, { bigint: true, throwIfNoEntry: false });
    return s && `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}
