import { describe, expect, it } from 'vitest';
import { LineWriter } from './line-writer.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('LineWriter', () => {
  it('joins the lines queued in one turn into one write, each ending in a newline', async () => {
    const writes: string[] = [];
    const writer = new LineWriter((text, done) => {
      writes.push(text);
      done();
    });
    const sent = [writer.push('{"a":1}'), writer.push('{"b":2}'), writer.push('{"c":3}')];
    expect(writes).toEqual([]); // nothing before the end of the turn
    await Promise.all(sent);
    expect(writes).toEqual(['{"a":1}\n{"b":2}\n{"c":3}\n']);
  });

  it('starts a new write for lines queued after a flush', async () => {
    const writes: string[] = [];
    const writer = new LineWriter((text, done) => {
      writes.push(text);
      done();
    });
    await writer.push('one');
    await writer.push('two');
    expect(writes).toEqual(['one\n', 'two\n']);
  });

  it('rejects every line of a failed write, and a throwing writer too', async () => {
    const failing = new LineWriter((_text, done) => done(new Error('EPIPE')));
    await expect(Promise.all([failing.push('a'), failing.push('b')])).rejects.toThrow('EPIPE');
    const throwing = new LineWriter(() => {
      throw new Error('closed');
    });
    await expect(throwing.push('a')).rejects.toThrow('closed');
  });

  it('never leaves an unhandled rejection when the caller ignores the outcome', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const writer = new LineWriter((_text, done) => done(new Error('EPIPE')));
      void writer.push('ignored');
      await nextTurn();
      await nextTurn();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
