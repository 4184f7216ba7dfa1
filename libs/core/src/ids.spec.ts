import { describe, expect, it } from 'vitest';
import { newTraceId } from './ids.js';

describe('newTraceId', () => {
  it('gives 32 lowercase hex digits, never twice, across many refills of its pool', () => {
    const ids = Array.from({ length: 5000 }, () => newTraceId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('uses every hex digit in every position: the bytes are random, not a counter', () => {
    const ids = Array.from({ length: 2000 }, () => newTraceId());
    for (const position of [0, 15, 31]) {
      expect(new Set(ids.map((id) => id[position])).size).toBe(16);
    }
  });
});
