import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The fields of a row in `record`, in order: the order the hash chain has always used. */
const FIELDS = [
  'id', 'at', 'principal', 'auth_method', 'session_id', 'transport', 'client_name', 'client_version',
  'protocol_version', 'upstream', 'method', 'name', 'original_name', 'arguments', 'arguments_truncated',
  'arguments_digest', 'decision', 'rule', 'outcome', 'error_code', 'error_message', 'latency_ms',
  'response_bytes', 'request_id', 'trace_id',
] as const;

const COPY_CHUNK = 1000;

/**
 * Stores each audit row as one JSON text instead of 27 columns. The text is exactly what
 * the hash chain covers (a JSON array of the fields, id first), so a row is hashed and
 * written without being spelled out twice, and the insert binds 6 values instead of 27:
 * measured, about half of SQLite's CPU per row at the batch sizes strict mode commits
 * (docs/adr/007-audit-log-writer.md). Time and principal stay real, indexed columns.
 *
 * `audit_record` becomes a view with the old columns, extracted from the JSON, so queries
 * (ours, and anybody's in the sqlite3 shell) read as before. Existing rows are copied with
 * the same text their hashes were computed over, so the chain still verifies.
 */
export class AuditRecordAsJson1795226400000 implements MigrationInterface {
  name = 'AuditRecordAsJson1795226400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_entry (
        id        INTEGER PRIMARY KEY,
        at        INTEGER NOT NULL,
        principal TEXT    NOT NULL,
        record    TEXT    NOT NULL,
        prev_hash TEXT    NOT NULL,
        hash      TEXT    NOT NULL
      )`);
    for (let after = 0; ; ) {
      const rows = (await q.query(`SELECT * FROM audit_record WHERE id > ? ORDER BY id LIMIT ${COPY_CHUNK}`, [
        after,
      ])) as Record<string, unknown>[];
      if (rows.length === 0) break;
      for (const row of rows) {
        const record = JSON.stringify(FIELDS.map((field) => row[field]));
        await q.query(`INSERT INTO audit_entry (id, at, principal, record, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)`, [
          row.id, row.at, row.principal, record, row.prev_hash, row.hash,
        ]);
      }
      after = rows[rows.length - 1].id as number;
    }
    await q.query(`DROP TABLE audit_record`);
    await q.query(`CREATE INDEX audit_entry_at ON audit_entry (at)`);
    await q.query(`CREATE INDEX audit_entry_principal ON audit_entry (principal, at)`);
    const columns = FIELDS.map((field, i) =>
      field === 'id' || field === 'at' || field === 'principal' ? field : `json_extract(record, '$[${i}]') AS ${field}`,
    );
    await q.query(`CREATE VIEW audit_record AS SELECT ${columns.join(', ')}, prev_hash, hash FROM audit_entry`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The table exactly as the first two migrations left it, spelled out: a migration is a
    // frozen snapshot and must not change when later code does.
    await q.query(`
      CREATE TABLE audit_record_columns (
        id                  INTEGER PRIMARY KEY,
        at                  INTEGER NOT NULL,
        principal           TEXT    NOT NULL,
        auth_method         TEXT    NOT NULL,
        session_id          TEXT,
        transport           TEXT,
        client_name         TEXT,
        client_version      TEXT,
        protocol_version    TEXT,
        upstream            TEXT,
        method              TEXT    NOT NULL,
        name                TEXT,
        original_name       TEXT,
        arguments           TEXT,
        arguments_truncated INTEGER NOT NULL DEFAULT 0 CHECK (arguments_truncated IN (0, 1)),
        arguments_digest    TEXT,
        decision            TEXT    NOT NULL
                            CHECK (decision IN ('allowed', 'denied', 'limited', 'unauthenticated', 'refused')),
        rule                TEXT,
        outcome             TEXT    CHECK (outcome IN ('ok', 'tool_error', 'error')),
        error_code          INTEGER,
        error_message       TEXT,
        latency_ms          REAL,
        response_bytes      INTEGER,
        request_id          TEXT,
        trace_id            TEXT,
        prev_hash           TEXT    NOT NULL,
        hash                TEXT    NOT NULL
      )`);
    await q.query(`INSERT INTO audit_record_columns SELECT * FROM audit_record`);
    await q.query(`DROP VIEW audit_record`);
    await q.query(`DROP TABLE audit_entry`);
    await q.query(`ALTER TABLE audit_record_columns RENAME TO audit_record`);
    await q.query(`CREATE INDEX audit_record_at ON audit_record (at)`);
    await q.query(`CREATE INDEX audit_record_principal ON audit_record (principal, at)`);
  }
}
