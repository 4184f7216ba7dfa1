import type { AuditRow } from '@switchboard/audit';
import { callerName } from '@switchboard/core';

const ARGUMENTS_PREVIEW = 80;

// C0/C1 controls and bidi overrides: a host chooses tool names and arguments, and must not be
// able to move the cursor, recolour the terminal or reorder what an operator reads.
const UNSAFE_FOR_TERMINAL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Text from the log made safe to print on a terminal, on one line. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE_FOR_TERMINAL, (c) => (c === '\n' || c === '\r' || c === '\t' ? ' ' : '\uFFFD'));
}

/** Cut to `max` characters, marking the cut. */
export function preview(text: string, max = ARGUMENTS_PREVIEW): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * One row as one line for `audit tail`: time, decision, the rule that made it, outcome (with
 * the error code), caller, method, name, upstream, latency, and the start of the arguments.
 * The rule sits beside the decision because a denial alone does not say whether a policy
 * rule or the default deny refused, nor an `unauthenticated` whether the key was missing or
 * revoked; a row without one shows a dash, so the columns stay in place. The caller is
 * named as `stats` and `--principal` name it (an API key bare, anyone else with their kind:
 * `jwt:alice`): the principal alone made a token's `alice` look like the key `alice`.
 */
export function formatRowLine(row: AuditRow): string {
  const outcome = [row.outcome, row.errorCode].filter((v) => v !== null).join(':') || '-';
  const latency = row.latencyMs === null ? '-' : `${Math.round(row.latencyMs)}ms`;
  const fields = [
    new Date(row.at).toISOString(),
    row.decision,
    row.rule ?? '-',
    outcome,
    callerName({ id: row.principal, authMethod: row.authMethod }),
    row.method,
    row.name ?? '-',
    row.upstream ?? '-',
    latency,
    row.arguments === null ? '' : preview(row.arguments),
  ];
  return fields.map(terminalSafe).join('  ').trimEnd();
}
