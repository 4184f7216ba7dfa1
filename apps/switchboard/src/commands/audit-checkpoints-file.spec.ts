import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointLine, type Checkpoint } from '@switchboard/audit';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointsOfFile, readableSize } from './audit-checkpoints-file.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const checkpoint = (id: number): Checkpoint => ({ id, hash: 'a'.repeat(64), at: Date.UTC(2026, 10, 27) });

async function read(file: string, size: number) {
  const tally = { unreadable: 0 };
  const found: number[] = [];
  for await (const c of checkpointsOfFile(file, size, tally)) found.push(c.id);
  return { found, unreadable: tally.unreadable };
}

describe('checkpointsOfFile', () => {
  it('reads only as far as the file was when verify began: a line logged since is not read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-checkpoints-'));
    dirs.push(dir);
    const file = join(dir, 'switchboard.log');
    writeFileSync(file, `${checkpointLine(checkpoint(1))}\nother\n`);
    const size = await readableSize(file, 'where from');
    appendFileSync(file, `${checkpointLine(checkpoint(2))}\n`);
    expect(await read(file, size)).toEqual({ found: [1], unreadable: 0 });
    expect(await read(file, statSync(file).size)).toEqual({ found: [1, 2], unreadable: 0 });
    writeFileSync(file, '');
    expect(await read(file, 0)).toEqual({ found: [], unreadable: 0 });
  });
});
