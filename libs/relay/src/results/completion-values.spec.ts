import { describe, expect, it } from 'vitest';
import { MAX_COMPLETION_VALUES, withinCompletionLimit } from './completion-values.js';

const values = (count: number) => Array.from({ length: count }, (_, i) => `v${i}`);

describe('withinCompletionLimit', () => {
  it('returns a result of at most 100 values as it is, the same object', () => {
    const result = { completion: { values: values(MAX_COMPLETION_VALUES), hasMore: false } };
    expect(withinCompletionLimit(result)).toBe(result);
  });

  it('cuts more to the first 100, says there are more, and keeps the larger of total and the count sent', () => {
    const sent = { completion: { values: values(150), total: 120, hasMore: false }, _meta: { a: 1 } };
    expect(withinCompletionLimit(sent)).toEqual({ completion: { values: values(100), total: 150, hasMore: true }, _meta: { a: 1 } });
    expect(withinCompletionLimit({ completion: { values: values(101), total: 900 } })).toEqual({ completion: { values: values(100), total: 900, hasMore: true } });
    expect(sent.completion.values).toHaveLength(150);
  });
});
