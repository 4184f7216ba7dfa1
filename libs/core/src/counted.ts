/**
 * A count and its noun for messages people read: "1 row", "2 rows", "0 rows". English only
 * needs the one form for 1; `plural` is for the nouns that do not just take an s.
 */
export function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}
