import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HmacSha256 } from './hmac-sha256.js';

const reference = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest('hex');

describe('HmacSha256', () => {
  it('matches createHmac for keys shorter than, as long as and longer than a block', () => {
    for (const length of [0, 1, 32, 63, 64, 65, 200]) {
      const key = randomBytes(length);
      expect(new HmacSha256(key).hex('{"a":1}')).toBe(reference(key, '{"a":1}'));
    }
  });

  it('matches createHmac for texts around the block boundaries, in any script', () => {
    const key = randomBytes(32);
    const hmac = new HmacSha256(key);
    const pieces = ['', 'a', 'é', '✓', '😀', '\u0000', '"\\'];
    for (let length = 0; length < 200; length++) {
      const text = Array.from({ length }, (_, i) => pieces[(i * 7 + length) % pieces.length]).join('');
      expect(hmac.hex(text)).toBe(reference(key, text));
    }
  });

  it('gives the same digest again after a longer text (the scratch buffer keeps nothing)', () => {
    const key = randomBytes(32);
    const hmac = new HmacSha256(key);
    const first = hmac.hex('short');
    hmac.hex('a much longer text that overwrites more of the scratch buffer than the first one did');
    expect(hmac.hex('short')).toBe(first);
  });

  it('falls back to createHmac for texts beyond its buffer, with the same result', () => {
    const key = randomBytes(32);
    const hmac = new HmacSha256(key);
    for (const text of ['x'.repeat(5461), 'x'.repeat(5462), '✓'.repeat(6000), 'y'.repeat(100_000)]) {
      expect(hmac.hex(text)).toBe(reference(key, text));
    }
  });
});
