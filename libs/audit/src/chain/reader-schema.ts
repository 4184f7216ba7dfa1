import type { SqliteConnection } from '@switchboard/persistence';

/**
 * The columns of the `audit_record` view, in the order of the fields in `record` (see
 * recordText): the third migration made the view from this list, and every reader (export,
 * tail, stats, the admin API, a sqlite3 shell) reads the log through it.
 */
const RECORD_COLUMNS = [
  'id', 'at', 'principal', 'auth_method', 'session_id', 'transport', 'client_name', 'client_version',
  'protocol_version', 'upstream', 'method', 'name', 'original_name', 'arguments', 'arguments_truncated',
  'arguments_digest', 'decision', 'rule', 'outcome', 'error_code', 'error_message', 'latency_ms',
  'response_bytes', 'request_id', 'trace_id',
] as const;

/** The view's definition exactly as SQLite keeps it after the third migration. */
export const AUDIT_RECORD_VIEW_SQL = `CREATE VIEW audit_record AS SELECT ${RECORD_COLUMNS.map((column, i) =>
  column === 'id' || column === 'at' || column === 'principal' ? column : `json_extract(record, '$[${i}]') AS ${column}`,
).join(', ')}, prev_hash, hash FROM audit_entry`;

/**
 * What makes the readers show something other than the chained rows, though every row
 * still verifies: a rewritten `audit_record` view (`'allowed' AS decision`, or a WHERE that
 * leaves a principal out) lies in every export, page and count; a trigger (on the audit
 * tables, or on another table the daemon writes) can drop or rewrite rows as they are
 * written, and the chain then simply goes on from the row before. No migration makes
 * either, so whoever did could write the file.
 * Undefined when the schema is as the migrations left it.
 */
export function readerSchemaProblem(db: SqliteConnection): string | undefined {
  // A database from before the third migration keeps its rows in an audit_record table:
  // nothing to compare yet (readers read that table; the next start migrates it).
  if (!db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_entry'`).get()) return undefined;
  const view = db.prepare(`SELECT type, sql FROM sqlite_master WHERE name = 'audit_record'`).get() as
    | { type: string; sql: string | null }
    | undefined;
  if (!view) return 'the audit_record view, through which every reader shows the rows, is missing';
  if (view.type !== 'view' || view.sql !== AUDIT_RECORD_VIEW_SQL) {
    return 'the audit_record view, through which every reader shows the rows, is not the one the migrations made: exports, tail, stats and the admin API may show other values than the chained records';
  }
  const triggers = db.prepare(`SELECT name, tbl_name AS target FROM sqlite_master WHERE type = 'trigger' ORDER BY name`).all() as {
    name: string;
    target: string;
  }[];
  if (triggers.length > 0) {
    // Names from the file, quoted: they are printed on an operator's terminal.
    const named = triggers.map((t) => `${JSON.stringify(t.name)} on ${JSON.stringify(t.target)}`).join(', ');
    return `the database has triggers no migration made (${named}): they can drop or change rows as they are written, and the chain goes on from the row before`;
  }
  return undefined;
}
