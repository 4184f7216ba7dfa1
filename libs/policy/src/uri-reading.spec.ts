import { describe, expect, it } from 'vitest';
import { uriAsServersRead } from './uri-reading.js';

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
