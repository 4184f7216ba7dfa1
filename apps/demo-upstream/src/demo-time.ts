/**
 * ISO 8601 time of `date` as a wall clock in `timeZone` shows it, with that
 * zone's UTC offset (2025-03-01T13:04:05.006+01:00). Without a zone it is the
 * UTC form toISOString() gives. An unknown zone throws a RangeError naming it.
 */
export function isoTime(date: Date, timeZone?: string): string {
  if (timeZone === undefined) return date.toISOString();
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    }).formatToParts(date);
  } catch {
    throw new RangeError(`Unknown time zone "${timeZone}": use an IANA name such as Europe/Paris`);
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  // longOffset reads "GMT+05:30", or a bare "GMT" when the offset is zero.
  const offset = part('timeZoneName').replace(/^GMT/, '') || '+00:00';
  const millis = String(date.getUTCMilliseconds()).padStart(3, '0');
  return `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}.${millis}${offset}`;
}
