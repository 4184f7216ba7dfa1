import { describe, expect, it } from 'vitest';
import { signed } from './markdown.js';

describe('signed', () => {
  it('shows the sign of a difference, and none for what rounds to zero', () => {
    expect(signed(0.123, 2)).toBe('+0.12');
    expect(signed(-0.4, 2)).toBe('−0.40');
    expect(signed(-0.001, 2)).toBe('±0.00');
    expect(signed(Number.NaN, 2)).toBe('–');
  });
});
