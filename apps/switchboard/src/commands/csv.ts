import type { AuditRow } from '@switchboard/audit';

/** Column order of `audit export --format csv`: the JSON field names, `time` after `id`. */
export const CSV_COLUMNS = [
  'id', 'time', 'at', 'principal', 'authMethod', 'sessionId', 'transport', 'clientName', 'clientVersion',
  'protocolVersion', 'upstream', 'method', 'name', 'originalName', 'arguments', 'argumentsTruncated',
  'argumentsDigest', 'decision', 'rule', 'outcome', 'errorCode', 'errorMessage', 'latencyMs',
  'responseBytes', 'requestId', 'traceId', 'prevHash', 'hash',
] as const;

// Cells a spreadsheet would evaluate as a formula when the file is opened (CSV injection).
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV field per RFC 4180: quoted when it holds a comma, a quote, CR or LF, with quotes
 * doubled. Text that a spreadsheet would run as a formula (starting with = + - @ TAB CR) gets
 * a leading single quote, as OWASP advises: a host chooses tool names and arguments, so an
 * export opened in Excel must not run `=HYPERLINK(...)` or `=cmd|...`. Numbers are ours and
 * never formulas, so a negative error code stays a number.
 */
export function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A record with its CRLF line end (RFC 4180). */
export const csvRecord = (fields: (string | number | boolean | null)[]): string => `${fields.map(csvField).join(',')}\r\n`;

export const csvHeader = (): string => csvRecord([...CSV_COLUMNS]);

export function csvRow(row: AuditRow): string {
  const withTime: Record<string, string | number | boolean | null> = { ...row, time: new Date(row.at).toISOString() };
  return csvRecord(CSV_COLUMNS.map((column) => withTime[column]));
}
