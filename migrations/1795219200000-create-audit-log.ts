import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log: one append-only table of rows chained by hash, its indexes for the CLI and
 * admin filters, and the table that anchors the chain once retention prunes old rows.
 * Booleans are 0/1 integers, times epoch milliseconds (SQLite has no date type).
 */
export class CreateAuditLog1795219200000 implements MigrationInterface {
  name = 'CreateAuditLog1795219200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_record (
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
    await q.query(`CREATE INDEX audit_record_at ON audit_record (at)`);
    await q.query(`CREATE INDEX audit_record_principal ON audit_record (principal, at)`);
    await q.query(`CREATE INDEX audit_record_name ON audit_record (name, at)`);
    await q.query(`CREATE INDEX audit_record_decision ON audit_record (decision, at)`);
    await q.query(`
      CREATE TABLE audit_chain (
        key         TEXT    PRIMARY KEY,
        anchor_id   INTEGER NOT NULL,
        anchor_hash TEXT    NOT NULL,
        pruned_rows INTEGER NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_chain`);
    await q.query(`DROP TABLE audit_record`);
  }
}
