import { z } from 'zod';

/*
 * The kinds of value more than one section of the config file takes (a count in a range, a
 * timeout, a string that YAML may have read as a number, a list limit), so that the same
 * setting is refused with the same words wherever it appears: the top level and a server's
 * overrides both take timeouts and list limits.
 */

/** setTimeout treats anything above 2^31-1 ms as 1 ms, so a "very long" timeout would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** How tool and prompt names are prefixed (ADR 001): the top level's mode, and a server's override. */
export const NAMESPACE_MODES = ['prefix', 'auto', 'none'] as const;

const MAX_LIST_ITEMS = 1_000_000;
const MIN_LIST_BYTES = 1024;
const MAX_LIST_BYTES = 1024 * 1024 * 1024;

export const intIn = (min: number, max: number, reason: string) =>
  z.int({ error: reason }).min(min, { error: reason }).max(max, { error: reason });

export const millis = () => intIn(1, MAX_TIMER_MS, `must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`);

/** YAML reads `3000` and `true` as a number and a boolean; say how to get a string. */
export const text = () => z.string({ error: 'must be a string (quote numbers and booleans)' });
export const nonEmpty = () => z.string().min(1, { error: 'must not be empty' });

export const listItems = () => intIn(1, MAX_LIST_ITEMS, `must be an integer from 1 to ${MAX_LIST_ITEMS}`);
export const listBytes = () => intIn(MIN_LIST_BYTES, MAX_LIST_BYTES, `must be an integer from ${MIN_LIST_BYTES} to ${MAX_LIST_BYTES}`);
export const ITEMS_TEXT = 'Items kept of each list (tools, prompts, resources, resource templates) of an upstream; later ones are left out.';
export const BYTES_TEXT = "Bytes (of the entries' JSON) kept of each list of an upstream; the entry that would pass it and later ones are left out.";
