import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops the name and decision indexes of audit_record. Every index is written on every
 * call: measured, the four indexes cost ~14 µs of CPU per row at the small batches strict
 * mode commits (docs/performance.md). Time and principal keep theirs; a filter by tool or
 * decision reads the rows of its time range (or all rows without one), which SQLite does at
 * millions of rows per second: acceptable for an audit query, not for every call.
 */
export class SlimAuditIndexes1795222800000 implements MigrationInterface {
  name = 'SlimAuditIndexes1795222800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX audit_record_name`);
    await q.query(`DROP INDEX audit_record_decision`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX audit_record_name ON audit_record (name, at)`);
    await q.query(`CREATE INDEX audit_record_decision ON audit_record (decision, at)`);
  }
}
