import { describe, expect, it } from 'vitest';
import { afterIdBeyondHead, exportNotes } from './resume-notes.js';

describe('exportNotes', () => {
  it('names the newest id read as the one to resume after, also when no row matched', () => {
    expect(exportNotes({}, 1, 7)).toEqual(['note: exported 1 row; resume with --after-id 7']);
    expect(exportNotes({ afterId: 7, tool: 'fx__echo' }, 0, 9)).toEqual(['note: exported 0 rows; resume with --after-id 9']);
  });

  it('names none with --until, which leaves rows out by time whatever their ids', () => {
    expect(exportNotes({ until: 1 }, 2, 7)).toEqual([
      'note: exported 2 rows; no --after-id to resume from with --until: a row it left out for its time can have a smaller id than rows it exported',
    ]);
  });

  it('warns of an --after-id past the head, and resumes from the head so the ids taken next are not skipped', () => {
    expect(afterIdBeyondHead({ afterId: 7 }, 7)).toBeUndefined();
    expect(exportNotes({ afterId: 9 }, 0, 7)).toEqual([
      'warning: --after-id 9 is beyond the newest row of the log (id 7): was the log replaced or cut? Rows committed from now on get ids from 8',
      'note: exported 0 rows; resume with --after-id 7',
    ]);
  });
});
