import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, appendFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entry } from '../../test-support/temp-db.js';
import { recordText } from '../chain/row-hash.js';
import { JournalFile, LOCK_SUFFIX, takeLock } from './journal-file.js';
import { readJournal } from './recover-journals.js';

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').slice(0, -1);
const rowLines = (...entries: ReturnType<typeof entry>[]) => entries.map((e) => recordText(0, e));

describe('JournalFile', () => {
  it("a write the file system cuts short fails with the file system's reason, not a bare short write, and is cut back", () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-journal-'));
    // Compiled module: a child process cannot load TypeScript (npm test builds first).
    const module = new URL('../../dist/journal/journal-file.js', import.meta.url).href;
    const script = `const { JournalFile } = await import(${JSON.stringify(module)});
      const journal = JournalFile.create(${JSON.stringify(dir)});
      try { journal.write(['x'.repeat(2000)]); } catch (err) { console.log(JSON.stringify({ code: err.code, message: err.message })); }
      journal.close(false);`;
    // A file size limit of 1 KiB: the kernel writes what fits and stops (a short write), as a
    // full disk does; Node ignores SIGXFSZ, so writing on gets EFBIG, as a full disk's gets ENOSPC.
    const child = spawnSync('bash', ['-c', 'ulimit -f 1 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ code: 'EFBIG', message: 'EFBIG: file too large, write' });
    const [journalFile] = readdirSync(dir).filter((name) => name.endsWith('.journal'));
    // Only the header is left: the part of the batch that was written is cut back off.
    expect(readFileSync(join(dir, journalFile), 'utf8').split('\n')).toHaveLength(2);
  });

  it('is created owner-only, and a directory it cannot be created in is named in the error', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'sb-journal-')), 'audit-journal');
    const journal = JournalFile.create(dir);
    expect(statSync(journal.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, journal.name + LOCK_SUFFIX)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    journal.close(true);
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, '');
    expect(() => JournalFile.create(join(blocker, 'journal'))).toThrow(/^cannot create the audit journal .*a-file\/journal\/.*\.journal: /);
  });

  it('starts with a header, appends rows, and empties itself into the next generation', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-journal-'));
    const journal = JournalFile.create(dir);
    expect(JSON.parse(lines(journal.path)[0])).toEqual({ switchboardAuditJournal: 1, journal: journal.name, generation: 1 });
    const [a, b] = [entry({ requestId: 'a' }), entry({ requestId: 'b' })];
    journal.write(rowLines(a, b));
    expect(journal.rows).toBe(2);
    expect(readJournal(journal.path)).toEqual({ generation: 1, rows: [a, b], badLines: 0 });

    journal.rotate();
    expect(lines(journal.path)).toEqual([JSON.stringify({ switchboardAuditJournal: 1, journal: journal.name, generation: 2 })]);
    expect(journal).toMatchObject({ generation: 2, rows: 0 });
    journal.close(true);
    expect(existsSync(journal.path)).toBe(false);
    expect(existsSync(join(dir, `${journal.name}.lock`))).toBe(false);
  });

  it('writes rows of any script and size whole, in batches that outgrow its buffer', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-journal-'));
    const journal = JournalFile.create(dir);
    const small = [entry({ requestId: 'é 中 😀', arguments: '{"q":"naïve 𝄞"}' }), entry({ requestId: '2' })];
    const big = Array.from({ length: 40 }, (_, i) => entry({ requestId: `big-${i}`, arguments: JSON.stringify({ text: '€'.repeat(2000 + i) }) }));
    journal.write(rowLines(...small));
    journal.write(rowLines(...big));
    journal.write(rowLines(small[1]));
    expect(readJournal(journal.path)).toEqual({ generation: 1, rows: [...small, ...big, small[1]], badLines: 0 });
    expect(journal.rows).toBe(43);
    journal.close(true);
  });

  it('closed with rows it could not hand over, it stays for the next start, and its lock is free', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-journal-'));
    const journal = JournalFile.create(dir);
    journal.write(rowLines(entry()));
    expect(takeLock(join(dir, `${journal.name}.lock`))).toBeUndefined(); // held while open
    journal.close(false);
    expect(readJournal(journal.path).rows).toHaveLength(1);
    const lock = takeLock(join(dir, `${journal.name}.lock`));
    expect(lock).toBeDefined();
    lock!.release();
  });
});

describe('readJournal', () => {
  it('leaves out an unfinished last line: that write never returned, so its calls were never answered', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-journal-'));
    const journal = JournalFile.create(dir);
    const kept = entry({ requestId: 'kept' });
    journal.write(rowLines(kept));
    journal.close(false);
    appendFileSync(journal.path, recordText(0, entry()).slice(0, 40));
    expect(readJournal(journal.path)).toEqual({ generation: 1, rows: [kept], badLines: 0 });
  });

  it('counts lines that are not rows, and reads an empty file as nothing to move', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-journal-'));
    const path = join(dir, 'x.journal');
    writeFileSync(path, `${JSON.stringify({ switchboardAuditJournal: 1, journal: 'x', generation: 3 })}\n{"not":"a row"}\n${recordText(0, entry())}\n`);
    expect(readJournal(path)).toMatchObject({ generation: 3, badLines: 1 });
    expect(readJournal(path).rows).toHaveLength(1);
    writeFileSync(path, '');
    expect(readJournal(path)).toEqual({ rows: [], badLines: 0 });
  });
});
