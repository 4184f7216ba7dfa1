/**
 * The daemon's log as a person reads it in a terminal: one line per entry, local time, the
 * level's name, the message, then the entry's fields as key=value. pino writes JSON; this
 * turns each of its lines into that, so both formats carry the same entries.
 *
 * Every entry stays one line that starts with its time and level: line breaks and control
 * characters in the message or a value are escaped, so nothing an upstream says (its stderr,
 * its errors, logged as fields or inside messages) can start a line that looks like the
 * daemon's own (an audit checkpoint is read from the start of a line: checkpoint-line.ts).
 * An error's stack is the exception: its lines follow, indented, and never start with a time.
 */

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const LEVEL_COLORS: Record<number, string> = { 10: '\u001b[90m', 20: '\u001b[90m', 40: '\u001b[33m', 50: '\u001b[31m', 60: '\u001b[31m' };
const RESET = '\u001b[0m';
/** What every pino line has and the text line shows in its own place (or not at all). */
const OWN_PLACE = new Set(['level', 'time', 'msg']);
/** A value written bare: no space, quote, equals sign, backslash or control character. */
const BARE = /^[^\s"=\\\p{Cc}]+$/u;

export interface TextFormatOptions {
  /** Colour the level (a terminal that shows colour, NO_COLOR unset). */
  color?: boolean;
}

/** One pino JSON line as text; a line that is not JSON (nothing pino writes) is kept as it is. */
export function formatLogLine(json: string, options: TextFormatOptions = {}): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return `${json.trimEnd()}\n`;
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const name = (LEVEL_NAMES[level] ?? `L${level}`).padEnd(5);
  const shownLevel = options.color && LEVEL_COLORS[level] ? `${LEVEL_COLORS[level]}${name}${RESET}` : name;
  const time = typeof entry.time === 'number' ? localTime(entry.time) : '-';
  const message = typeof entry.msg === 'string' ? oneLine(entry.msg) : '';
  let stack = '';
  const fields: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (OWN_PLACE.has(key) || value === undefined) continue;
    if (key === 'err' && isError(value)) {
      const { stack: trace, ...rest } = value;
      fields.push(`err=${shown(rest)}`);
      if (typeof trace === 'string') stack = trace.split('\n').slice(1).map((line) => `    ${oneLine(line.trim())}\n`).join('');
      continue;
    }
    fields.push(`${oneLine(key)}=${shown(value)}`);
  }
  return `${time} ${shownLevel} ${message}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}\n${stack}`;
}

/** `2026-11-29 17:28:03.123` in the machine's time zone. */
function localTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

function shown(value: unknown): string {
  if (typeof value === 'string') return BARE.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  // JSON escapes every control character, so an object's text is one line too.
  return JSON.stringify(value) ?? String(value);
}

/** The text with line breaks and other control characters escaped as JSON escapes them. */
function oneLine(text: string): string {
  return text.replace(/\p{Cc}/gu, (c) => JSON.stringify(c).slice(1, -1));
}

function isError(value: unknown): value is Record<string, unknown> & { stack?: unknown } {
  return typeof value === 'object' && value !== null && 'message' in value;
}
