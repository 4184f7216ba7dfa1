import type { AuditFilter } from '@switchboard/audit';
import { counted } from '@switchboard/core';

/**
 * The warning for an `--after-id` past the log's newest row, or undefined. A log replaced by
 * an older copy, or commits lost to a power cut: new rows take the ids after the head, and
 * a reader that went on from the id it was given would skip them. So `export` resumes, and
 * `tail -f` follows, from the head instead.
 */
export function afterIdBeyondHead(filter: AuditFilter, head: number): string | undefined {
  if (filter.afterId === undefined || filter.afterId <= head) return undefined;
  return (
    `warning: --after-id ${filter.afterId} is beyond the newest row of the log (id ${head}): was the log replaced or cut? ` +
    `Rows committed from now on get ids from ${head + 1}`
  );
}

/**
 * What `audit export` says on stderr once it is done: how many rows it wrote, and the id to
 * give `--after-id` next time, so that a scheduled export picks up where this one stopped
 * with no row twice and none skipped. Ids are given at commit, in order, so no row can later
 * appear at or below an id the export has read through; `at` is given at arrival, so a time
 * window can (a row held back by a write lock, moved in from a journal).
 *
 * `head`: the newest id of the log as the export read it (its read snapshot). Every row up to
 * it that the filters match is in the output, so that is where the next run starts: with
 * filters, rows after the last one written were read and left out, and need not be read again.
 * Not with `--until`: it leaves rows out by their time, and one it left out can have a smaller
 * id than rows it wrote, so no id resumes it without a gap.
 */
export function exportNotes(filter: AuditFilter, exported: number, head: number): string[] {
  const beyond = afterIdBeyondHead(filter, head);
  const wrote = `exported ${counted(exported, 'row')}`;
  const resume =
    filter.until === undefined
      ? `note: ${wrote}; resume with --after-id ${head}`
      : `note: ${wrote}; no --after-id to resume from with --until: a row it left out for its time can have a smaller id than rows it exported`;
  return beyond === undefined ? [resume] : [beyond, resume];
}
