import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest global setup: every temp dir of the run goes under one root that goes with the run.
 *
 * Why: tests make hundreds of temp dirs (a SQLite file, a data dir, a config each), and so do
 * the daemons and CLIs they start. Setting TMPDIR here, before the workers exist, sends all
 * of them under one directory that teardown removes, so `npm test` leaves nothing in /tmp
 * however a test ends. A run killed outright leaves its one `switchboard-tests-*` dir.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'switchboard-tests-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true });
  };
}
