import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';

/**
 * Counts the rows a running daemon has committed to its audit log, from outside: a
 * read-only connection on the daemon's file. WAL lets it read without blocking the
 * daemon's writer, and it sees exactly the committed rows.
 */
export class AuditRowCounter {
  private readonly db: Database.Database;
  private readonly count: Database.Statement<[], { rows: number }>;

  private constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    this.count = this.db.prepare('SELECT COUNT(*) AS rows FROM audit_record');
  }

  /** undefined when there is no database (the audit log is off). */
  static open(file: string): AuditRowCounter | undefined {
    return existsSync(file) ? new AuditRowCounter(file) : undefined;
  }

  rows(): number {
    return this.count.get()!.rows;
  }

  close(): void {
    this.db.close();
  }
}
