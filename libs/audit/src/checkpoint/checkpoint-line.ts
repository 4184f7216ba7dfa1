/**
 * A checkpoint names one row of the chain as it was when the line was written: its id, its
 * hash and its time. Kept outside the database (a log shipper, a ticket), it is what the
 * chain cannot be for itself: a fact an attacker who can write the file cannot change. The
 * line says what it is and its format's version, so it can be picked out of other log text.
 */
export interface Checkpoint {
  id: number;
  /** The row's `hash` (hex SHA-256), which covers it and every row before it. */
  hash: string;
  /** The row's `at` (epoch ms): what retention judges a row's age by. */
  at: number;
}

export const CHECKPOINT_TAG = 'switchboard-audit-checkpoint';

// The whole v1 line, matched where the tag starts (sticky): one form, no optional parts.
const V1 = new RegExp(`${CHECKPOINT_TAG} v1 id=([1-9]\\d{0,14}) hash=([0-9a-f]{64}) at=(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z)`, 'y');

/** `switchboard-audit-checkpoint v1 id=123 hash=5f1c... at=2026-11-27T20:00:00.000Z` */
export function checkpointLine(c: Checkpoint): string {
  return `${CHECKPOINT_TAG} v1 id=${c.id} hash=${c.hash} at=${new Date(c.at).toISOString()}`;
}

/**
 * The checkpoints in one line of text: a line of their own, or inside other log text (the
 * daemon's JSON log line carries one in its `msg`). `unreadable` counts the tags that do not
 * start a v1 checkpoint (a cut line, another version), so that they are not silently skipped.
 */
export function checkpointsIn(text: string): { checkpoints: Checkpoint[]; unreadable: number } {
  const checkpoints: Checkpoint[] = [];
  let unreadable = 0;
  for (let at = text.indexOf(CHECKPOINT_TAG); at !== -1; at = text.indexOf(CHECKPOINT_TAG, at + CHECKPOINT_TAG.length)) {
    V1.lastIndex = at;
    const match = V1.exec(text);
    const time = match ? Date.parse(match[3]) : Number.NaN;
    if (!match || !Number.isSafeInteger(Number(match[1])) || Number.isNaN(time)) unreadable += 1;
    else checkpoints.push({ id: Number(match[1]), hash: match[2], at: time });
  }
  return { checkpoints, unreadable };
}
