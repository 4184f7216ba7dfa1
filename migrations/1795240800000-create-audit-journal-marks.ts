import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How far each strict-mode journal has been moved into the log: for journal file `journal`,
 * the first `moved_rows` rows of its generation `generation` are in audit_entry. Written in
 * the same transaction as those rows, so a journal found after a crash is moved exactly
 * once, whether the crash came before or after the daemon emptied the file.
 */
export class CreateAuditJournalMarks1795240800000 implements MigrationInterface {
  name = 'CreateAuditJournalMarks1795240800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_journal_mark (
        journal    TEXT    PRIMARY KEY,
        generation INTEGER NOT NULL,
        moved_rows INTEGER NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_journal_mark`);
  }
}
