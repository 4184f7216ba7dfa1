import type { AuditRow } from '@switchboard/audit';
import { callerName } from '@switchboard/core';

const ARGUMENTS_PREVIEW = 80;

// Characters no value shows as they are. C0/C1 controls and bidi controls: a host chooses
// tool names and arguments, and must not be able to move the cursor, recolour the terminal or
// reorder what an operator reads. Whitespace other than the ASCII space (a newline starts a
// fake row, a tab or an em space looks like the gap between two fields) and invisible
// zero-width characters.
const ESCAPED = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2066-\\u2069';
const ESCAPED_CHAR = new RegExp(`[${ESCAPED}]|[^\\S ]`);
/**
 * What makes a value need quotes: an escaped character, a space at either end or two in a
 * row (fields are two spaces apart), a leading quote (it would read as a quoted value), or
 * nothing at all (no field between two gaps).
 */
const MISREADABLE = new RegExp(`[${ESCAPED}]|[^\\S ]|^ | $|  |^"|^$`);

const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '"': '\\"', '\\': '\\\\' };

/**
 * A value from the log as one field of a line: as it is, or, when it could be misread (see
 * MISREADABLE), in double quotes with `\"`, `\\`, `\n`, `\r`, `\t` and `\uXXXX` for the other
 * escaped characters and for each space at an end or in a run. No field then holds a line
 * break or two spaces in a row, so the two-space gaps are the only ones, and a quoted field
 * is one that starts with `"`.
 */
export function fieldText(text: string): string {
  if (!MISREADABLE.test(text)) return text;
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === ' ') {
      const edgeOrRun = i === 0 || i === text.length - 1 || text[i - 1] === ' ' || text[i + 1] === ' ';
      out += edgeOrRun ? '\\u0020' : ' ';
    } else if (Object.hasOwn(NAMED_ESCAPES, c)) out += NAMED_ESCAPES[c];
    else if (ESCAPED_CHAR.test(c)) out += `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return `${out}"`;
}

/** Cut to `max` characters, marking the cut. */
export function preview(text: string, max = ARGUMENTS_PREVIEW): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A row's value in a `tail` line: a dash for none, and a value that is a dash quoted, so the two differ. */
const shown = (value: string | null): string => (value === null ? '-' : value === '-' ? '"-"' : fieldText(value));

/**
 * One row as one line for `audit tail`: time, decision, the rule that made it, outcome (with
 * the error code), caller, method, name, upstream, latency, and the start of the arguments,
 * two spaces apart (fieldText keeps any value from making a gap of its own).
 * The rule sits beside the decision because a denial alone does not say whether a policy
 * rule or the default deny refused, nor an `unauthenticated` whether the key was missing or
 * revoked; a row without one shows a dash, so the columns stay in place. The caller is
 * named as `stats` and `--principal` name it (an API key bare, anyone else with their kind:
 * `jwt:alice`): the principal alone made a token's `alice` look like the key `alice`.
 */
export function formatRowLine(row: AuditRow): string {
  const outcome = [row.outcome, row.errorCode].filter((v) => v !== null).join(':') || null;
  const latency = row.latencyMs === null ? '-' : `${Math.round(row.latencyMs)}ms`;
  const fields = [
    new Date(row.at).toISOString(),
    shown(row.decision),
    shown(row.rule),
    shown(outcome),
    shown(callerName({ id: row.principal, authMethod: row.authMethod })),
    shown(row.method),
    shown(row.name),
    shown(row.upstream),
    latency,
    row.arguments === null ? '' : shown(preview(row.arguments)),
  ];
  return fields.join('  ').trimEnd();
}
