import { describe, expect, it } from 'vitest';
import { unnormalizedPath, uriAsServersRead } from './uri-reading.js';

describe('uriAsServersRead (the URI an SDK server looks up, when it is another one)', () => {
  it.each([
    ['DEMO://x/secret', 'demo://x/secret'],
    [' demo://x/secret', 'demo://x/secret'],
    ['demo://x/public/.\t./secret', 'demo://x/secret'],
    ['demo://x/public/.\n./secret', 'demo://x/secret'],
    ['file:///docs/..\\secret/key', 'file:///secret/key'],
    ['file://localhost/secret/key', 'file:///secret/key'],
    ['HTTPS://Example.COM/a', 'https://example.com/a'],
  ])('reads %j as %s', (uri, read) => {
    expect(uriAsServersRead(uri)).toBe(read);
  });

  it.each(['demo://x/secret', 'file:///docs/a b.md', 'file:///docs/caf\u00e9.md', 'fixture://items/{id}', 'file:///a/%zz', 'not a uri', 'mem:abc'])(
    'finds nothing else in %j (the same URI, or only percent-encoded by the parse)',
    (uri) => {
      expect(uriAsServersRead(uri)).toBeUndefined();
    },
  );
});

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
