import { describe, expect, it } from 'vitest';
import { unnormalizedPath } from './resources.js';

describe('unnormalizedPath (URIs refused before a resource rule sees them)', () => {
  it.each([
    ['file:///docs/../secret/key.txt', 'must not contain . or .. path segments'],
    ['file:///a/./b', 'must not contain . or .. path segments'],
    ['file:///docs/%2e%2E/x', 'must not contain . or .. path segments'],
    ['file:///..', 'must not contain . or .. path segments'],
    ['http://h/a/../b', 'must not contain . or .. path segments'],
    ['switchboard://raw/file:///x/../y', 'must not contain . or .. path segments'],
    ['file:////secret/key.txt', 'must not contain empty path segments (//)'],
    ['file:///a//b', 'must not contain empty path segments (//)'],
  ])('refuses %s', (uri, reason) => {
    expect(unnormalizedPath(uri)).toBe(reason);
  });

  it.each(['file:///a/b', 'file:///a/b/', 'fixture://items/1', 'ui://x', 'mem:abc', 'file:///a/b?x=../y', 'https://host//double', 's3://bucket/a..b/c'])(
    'takes %s',
    (uri) => {
      expect(unnormalizedPath(uri)).toBeUndefined();
    },
  );
});
