/**
 * The part of the usage text about one command family (`keys`) or one command
 * (`keys create`): its entries, and the notes below them that apply (FILTERS only where an
 * entry takes them). `--help` after a family or a command answers with this rather than the
 * whole usage, fifty lines of which the user asked about three.
 *
 * The usage text is read as it is laid out: `Usage:`, then one entry per command, each a line
 * `  switchboard <family> <command> ...` and its lines indented deeper; after a blank line,
 * notes, each a line at the margin and its lines indented.
 */
const EVERY_COMMAND = 'switchboard --help shows every command.';

export function usagePart(usage: string, command: string): string {
  const [entries, notes] = blocks(usage);
  const own = entries.filter((entry) => entry[0].startsWith(`  switchboard ${command} `) || entry[0] === `  switchboard ${command}`);
  if (own.length === 0) return usage;
  const takesFilters = own.some((entry) => entry.join('\n').includes('FILTERS'));
  // A part of a part (a command's, from its family's) says once where the rest is.
  const kept = notes.filter((note) => (takesFilters || !note[0].startsWith('FILTERS:')) && note[0] !== EVERY_COMMAND);
  return ['Usage:', ...own.flat(), '', ...kept.flat(), EVERY_COMMAND].join('\n');
}

/** The usage's entries and notes, each as its lines. */
function blocks(usage: string): [entries: string[][], notes: string[][]] {
  const lines = usage.split('\n');
  const blank = lines.indexOf('');
  const entries = group(lines.slice(1, blank === -1 ? undefined : blank), (line) => /^ {2}\S/.test(line));
  const notes = blank === -1 ? [] : group(lines.slice(blank + 1), (line) => /^\S/.test(line));
  return [entries, notes];
}

/** Lines in groups, each starting at a line `starts` says begins one. */
function group(lines: string[], starts: (line: string) => boolean): string[][] {
  const groups: string[][] = [];
  for (const line of lines) {
    if (starts(line) || groups.length === 0) groups.push([line]);
    else groups.at(-1)!.push(line);
  }
  return groups;
}
