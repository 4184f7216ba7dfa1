import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Committer } from './committer.js';
import { AuditFilesGoneError, committingInPlace, FilesInPlace } from './files-in-place.js';

describe('FilesInPlace', () => {
  let dir: string;
  let db: string;
  let journal: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sb-files-in-place-'));
    db = join(dir, 'switchboard.sqlite');
    journal = join(dir, 'journal');
    writeFileSync(db, 'db');
    writeFileSync(journal, 'j');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('has nothing to say while the files are the ones opened, written to or not', () => {
    const files = new FilesInPlace([db, journal]);
    writeFileSync(journal, 'more', { flag: 'a' });
    expect(files.problem()).toBeUndefined();
  });

  it('says so when a file is deleted, or replaced by another one of the same name', () => {
    expect(new FilesInPlace([db, journal]).problem()).toBeUndefined();
    const files = new FilesInPlace([db, journal]);
    rmSync(journal);
    expect(files.problem()).toBe(`${journal} was deleted while the daemon ran; restart it to open the log again`);

    const replaced = new FilesInPlace([db]);
    writeFileSync(join(dir, 'other'), 'db');
    renameSync(join(dir, 'other'), db);
    expect(replaced.problem()).toMatch(/was replaced by another file/);
  });

  it('a whole data directory deleted', () => {
    const files = new FilesInPlace([db, journal]);
    rmSync(dir, { recursive: true, force: true });
    expect(files.problem()).toMatch(/switchboard\.sqlite was deleted/);
  });

  it('committingInPlace refuses the commit (the rows stay with the writer) and passes it on otherwise', async () => {
    const committed: number[] = [];
    const inner: Committer = {
      commit: async (entries) => {
        committed.push(entries.length);
        return { id: committed.length, hash: 'h' };
      },
      close: async () => undefined,
    };
    const files = new FilesInPlace([db]);
    const committer = committingInPlace(inner, files);
    await committer.commit([{} as never, {} as never]);
    rmSync(db);
    await expect(committer.commit([{} as never])).rejects.toBeInstanceOf(AuditFilesGoneError);
    expect(committed).toEqual([2]);
  });
});
