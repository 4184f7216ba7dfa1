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

/** Where the daemon's JSON log line puts one: its `msg`, which JSON escaping keeps whole. */
const LOGGED = `"msg":"audit: checkpoint ${CHECKPOINT_TAG}`;
/**
 * The daemon's text log line (log.format text) of one, from the line's start: its time, its
 * level, its message. The text format escapes line breaks in whatever it writes, so only the
 * daemon starts a line; anywhere later in a line the text may be an upstream's.
 */
const LOGGED_AS_TEXT = new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  audit: checkpoint (?=${CHECKPOINT_TAG})`);

/**
 * The checkpoint in one line of text, read only where a checkpoint is written: at the line's
 * start (`audit checkpoint`'s output kept as it is) or as the daemon's log message (JSON, or
 * text from the line's start). Anywhere
 * else the text is not the daemon's: a stdio upstream's stderr and whatever a host sent it
 * reach the log inside other fields, and a forged checkpoint there would fail `verify` for
 * good (or, repeated, teach an operator to shrug at a failure). `unreadable` counts the tags
 * that are no readable v1 checkpoint in such a place, or are elsewhere, so that none is
 * silently skipped. A line holds one checkpoint at most: a second tag in it is not the daemon's.
 */
export function checkpointIn(text: string): { checkpoint?: Checkpoint; unreadable: number } {
  let tags = 0;
  for (let at = text.indexOf(CHECKPOINT_TAG); at !== -1; at = text.indexOf(CHECKPOINT_TAG, at + CHECKPOINT_TAG.length)) tags += 1;
  if (tags === 0) return { unreadable: 0 };
  const checkpoint = readV1(text);
  return checkpoint ? { checkpoint, unreadable: tags - 1 } : { unreadable: tags };
}

/** The v1 checkpoint at the line's start or as the daemon's log message, if one is there and readable. */
function readV1(text: string): Checkpoint | undefined {
  const logged = text.indexOf(LOGGED);
  const asText = LOGGED_AS_TEXT.exec(text);
  const start = text.startsWith(CHECKPOINT_TAG) ? 0 : asText ? asText[0].length : logged === -1 ? -1 : logged + LOGGED.length - CHECKPOINT_TAG.length;
  if (start === -1) return undefined;
  V1.lastIndex = start;
  const match = V1.exec(text);
  const time = match ? Date.parse(match[3]) : Number.NaN;
  if (!match || !Number.isSafeInteger(Number(match[1])) || Number.isNaN(time)) return undefined;
  return { id: Number(match[1]), hash: match[2], at: time };
}
