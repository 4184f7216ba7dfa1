import { describe, expect, it } from 'vitest';
import { OTHER_ADDRESSES, RefusalBudget, type RefusalSample } from './refusal-budget.js';

const sample: RefusalSample = { httpMethod: 'POST', path: '/mcp', decision: 'unauthenticated', rule: 'auth:unknown-key' };

describe('RefusalBudget', () => {
  it('records the first refusals of each address in a window one by one, counts the rest, and sums them up when the window ends', () => {
    let now = 0;
    const budget = new RefusalBudget({ perWindow: 3, windowMs: 1000, maxAddresses: 10, now: () => now });
    const recorded = (address: string) => budget.admit(address, sample).record;
    expect([1, 2, 3, 4, 5].map(() => recorded('10.0.0.1'))).toEqual([true, true, true, false, false]);
    expect(recorded('10.0.0.2')).toBe(true); // another address has its own budget
    expect(budget.suppressing).toBe(true);

    now = 1000;
    const { record, summaries } = budget.admit('10.0.0.1', sample);
    expect(record).toBe(true); // a new window
    expect(summaries).toEqual([{ address: '10.0.0.1', suppressed: 2, since: 0, until: 1000, sample, kinds: [{ sample, count: 2 }], otherKinds: 0 }]);
    expect(budget.drain()).toEqual([]);
  });

  it('counts the suppressed refusals by kind, commonest first, ten kinds at most', () => {
    const budget = new RefusalBudget({ perWindow: 1, windowMs: 1000, maxAddresses: 10, now: () => 0 });
    const of = (rule: string): RefusalSample => ({ ...sample, rule });
    budget.admit('a', of('first')); // recorded: not in the summary's kinds
    budget.admit('a', of('x'));
    for (let i = 0; i < 3; i++) budget.admit('a', of('y'));
    for (let i = 0; i < 12; i++) budget.admit('a', of(`k${i}`));
    const [summary] = budget.drain();
    expect(summary!.suppressed).toBe(16);
    expect(summary!.sample).toEqual(of('y'));
    expect(summary!.kinds.map((k) => [k.sample.rule, k.count])).toEqual([['y', 3], ['x', 1], ...Array.from({ length: 8 }, (_, i) => [`k${i}`, 1])]);
    expect(summary!.otherKinds).toBe(4);
  });

  it('counts addresses beyond maxAddresses under one shared budget', () => {
    const budget = new RefusalBudget({ perWindow: 1, windowMs: 1000, maxAddresses: 2, now: () => 0 });
    expect(['a', 'b', 'c', 'd', 'a'].map((address) => budget.admit(address, sample).record)).toEqual([true, true, true, false, false]);
    expect(budget.drain().map((s) => [s.address, s.suppressed])).toEqual([
      ['a', 1],
      [OTHER_ADDRESSES, 1],
    ]);
  });
});
