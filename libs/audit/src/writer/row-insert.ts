import type { SqliteConnection, SqliteStatement } from '@switchboard/persistence';
import type { AuditEntry } from '../audit.types.js';
import { readChainHead } from '../chain/chain-head.js';
import { chainHash, recordText } from '../chain/row-hash.js';

/**
 * Rows per INSERT statement, largest first. One statement for several rows saves SQLite's
 * per-statement work and a native call per row; a batch is cut into these sizes, so only
 * six statements are ever prepared.
 */
const CHUNKS = [32, 16, 8, 4, 2, 1];

/**
 * Appends entries as chained rows in one IMMEDIATE transaction: the chain head is read
 * under the write lock, so the ids and hashes stay consecutive even if another process
 * writes to the same file. better-sqlite3 is synchronous, so a batch commits within one
 * turn of the event loop.
 */
export class RowInserter {
  private readonly inserts = new Map<number, SqliteStatement>();
  private readonly appendAll: (entries: readonly AuditEntry[]) => number;

  constructor(private readonly db: SqliteConnection) {
    const tx = db.transaction((entries: readonly AuditEntry[]) => {
      let head = readChainHead(db);
      let next = 0;
      while (next < entries.length) {
        const size = CHUNKS.find((chunk) => chunk <= entries.length - next)!;
        const values: unknown[] = [];
        for (let i = next; i < next + size; i++) {
          const row = entries[i];
          const id = head.id + 1;
          const record = recordText(id, row);
          const hash = chainHash(head.hash, record);
          values.push(id, row.at, row.principal, record, head.hash, hash);
          head = { id, hash };
        }
        this.insertOf(size).run(values);
        next += size;
      }
      return head.id;
    });
    this.appendAll = (entries) => (tx as unknown as { immediate: typeof tx }).immediate(entries);
  }

  /** Commits every entry or none; returns the id of the last row. Throws what SQLite threw. */
  append(entries: readonly AuditEntry[]): number {
    return this.appendAll(entries);
  }

  private insertOf(rows: number): SqliteStatement {
    let statement = this.inserts.get(rows);
    if (!statement) {
      const tuples = Array(rows).fill('(?, ?, ?, ?, ?, ?)').join(', ');
      statement = this.db.prepare(`INSERT INTO audit_entry (id, at, principal, record, prev_hash, hash) VALUES ${tuples}`);
      this.inserts.set(rows, statement);
    }
    return statement;
  }
}
