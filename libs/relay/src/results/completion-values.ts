import type { Item } from '../relay.types.js';

/** The spec: a completion's `values` "must not exceed 100 items" (the SDK's client refuses more). */
export const MAX_COMPLETION_VALUES = 100;

/**
 * A well-formed completion/complete result (completionResultProblems found nothing) that a
 * client can accept: an upstream's values past the first 100 are cut, and the result says what
 * the spec has for "there are more": `hasMore: true`, and `total` at least the number the
 * upstream had. Cutting keeps the suggestions useful where refusing the whole answer would not.
 * The same object when it is within the limit.
 */
export function withinCompletionLimit(result: Item): Item {
  const completion = result.completion as Item;
  const values = completion.values as unknown[];
  if (values.length <= MAX_COMPLETION_VALUES) return result;
  const total = typeof completion.total === 'number' ? Math.max(completion.total, values.length) : values.length;
  return { ...result, completion: { ...completion, values: values.slice(0, MAX_COMPLETION_VALUES), total, hasMore: true } };
}
