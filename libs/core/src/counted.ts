/**
 * A count and its noun for messages people read: "1 row", "2 rows", "0 rows". English only
 * needs the one form for 1; `plural` is for the nouns that do not just take an s.
 */
export function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}

/** The verb "to be" agreeing with `count` things: was or were (past), is or are (present). */
export function beVerb(count: number, tense: 'present' | 'past'): string {
  if (tense === 'past') return count === 1 ? 'was' : 'were';
  return count === 1 ? 'is' : 'are';
}

/** counted() and the verb agreeing with it: "1 row was", "2 rows were", "1 item is", "2 items are". */
export function countedBe(count: number, singular: string, tense: 'present' | 'past', plural = `${singular}s`): string {
  return `${counted(count, singular, plural)} ${beVerb(count, tense)}`;
}
