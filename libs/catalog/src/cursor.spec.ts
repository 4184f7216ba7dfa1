import { ErrorCode, McpError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor.js';

function expectInvalid(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((err as McpError).message).toBe('Invalid cursor');
    return;
  }
  expect.fail('expected an invalid-cursor error');
}

describe('gateway cursors', () => {
  it('round-trips the last key, unicode included', () => {
    for (const key of ['github__create_issue', 'file:///home/ädå/🎉.md', '']) {
      expect(decodeCursor('tools', encodeCursor('tools', key))).toBe(key);
    }
  });

  it('is base64url of a small JSON object', () => {
    const cursor = encodeCursor('prompts', 'a');
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(cursor, 'base64url').toString())).toEqual({ k: 'prompts', a: 'a' });
  });

  it('rejects a cursor issued for another list', () => {
    expectInvalid(() => decodeCursor('resources', encodeCursor('tools', 'x')));
  });

  it.each([
    ['garbage', 'not a cursor!'],
    ['empty', ''],
    ['number', 42],
    ['null', null],
    ['object', { k: 'tools', a: 'x' }],
    ['base64 of non-JSON', Buffer.from('hello').toString('base64url')],
    ['JSON without a key', Buffer.from('{"k":"tools"}').toString('base64url')],
    ['JSON with a numeric key', Buffer.from('{"k":"tools","a":3}').toString('base64url')],
    ['JSON array', Buffer.from('["tools","x"]').toString('base64url')],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('base64url')],
  ])('rejects %s', (_label, cursor) => {
    expectInvalid(() => decodeCursor('tools', cursor));
  });

  it('rejects a tampered or truncated cursor', () => {
    const cursor = encodeCursor('tools', 'github__create_issue');
    expectInvalid(() => decodeCursor('tools', cursor.slice(0, -3)));
    expectInvalid(() => decodeCursor('tools', `${cursor}=`));
    expectInvalid(() => decodeCursor('tools', `X${cursor}`));
  });
});
