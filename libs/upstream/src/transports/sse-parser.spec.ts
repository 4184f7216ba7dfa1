import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser.js';

function parse(chunks: string[], lastEventId?: string) {
  const events: { data: string; type: string; id?: string }[] = [];
  const retries: number[] = [];
  const parser = new SseParser(
    {
      event: (data, type) => events.push({ data, type, id: parser.lastEventId }),
      retry: (ms) => retries.push(ms),
    },
    lastEventId,
  );
  for (const chunk of chunks) parser.push(chunk);
  return { events, retries, lastEventId: parser.lastEventId };
}

/** Every way of cutting `text` in two. */
function splits(text: string): string[][] {
  return Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);
}

describe('SseParser', () => {
  it('dispatches events on blank lines, with their type and id', () => {
    const { events, lastEventId } = parse(['event: message\nid: 1\ndata: {"a":1}\n\ndata: two\n\n']);
    expect(events).toEqual([
      { data: '{"a":1}', type: 'message', id: '1' },
      { data: 'two', type: '', id: '1' },
    ]);
    expect(lastEventId).toBe('1');
  });

  it('gives the same events however the text is cut, with LF, CRLF or CR line ends', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = [': keep-alive', 'id: a_1', 'data: {"x":', 'data: 2}', '', 'event: other', 'data: y', '', ''].join(eol);
      for (const chunks of splits(text)) {
        const { events } = parse(chunks);
        expect(events, JSON.stringify(chunks)).toEqual([
          { data: '{"x":\n2}', type: '', id: 'a_1' },
          { data: 'y', type: 'other', id: 'a_1' },
        ]);
      }
    }
  });

  it('joins a data line that arrives in many chunks', () => {
    const payload = 'x'.repeat(10_000);
    const text = `data: ${payload}\n\n`;
    const chunks = text.match(/[\s\S]{1,7}/g)!;
    expect(parse(chunks).events).toEqual([{ data: payload, type: '', id: undefined }]);
  });

  it('records the id of an event without data (a priming event) but does not dispatch it', () => {
    const { events, lastEventId, retries } = parse(['id: s_0\nretry: 250\ndata: \n\n']);
    expect(events).toEqual([]);
    expect(lastEventId).toBe('s_0');
    expect(retries).toEqual([250]);
  });

  it('takes an id only once its event is complete', () => {
    expect(parse(['id: 1\ndata: a\n\nid: 2\ndata: b\n']).lastEventId).toBe('1');
  });

  it('keeps the id it resumed from until the stream names another, and an empty id resets it', () => {
    expect(parse(['data: a\n\n'], 'old').events).toEqual([{ data: 'a', type: '', id: 'old' }]);
    expect(parse(['id\ndata: a\n\n'], 'old').lastEventId).toBeUndefined();
  });

  it('drops one leading space, a BOM, comments, unknown fields and bad retry values', () => {
    const { events, retries } = parse(['\ufeffdata:  two spaces\n:comment\nfoo: bar\nretry: soon\n\n', 'data\n\n']);
    expect(events).toEqual([{ data: ' two spaces', type: '', id: undefined }]);
    expect(retries).toEqual([]);
  });

  it('does not dispatch an event the stream cut off before its blank line', () => {
    expect(parse(['data: complete\n\ndata: cut']).events).toEqual([{ data: 'complete', type: '', id: undefined }]);
  });

  it('gives up on an event over its limit, whether one long line or many data lines, and reports it once', () => {
    for (const chunks of [['data: ', 'x'.repeat(60), 'x'.repeat(60)], ['data: 0123456789\n'.repeat(10), 'data: more\n\n']]) {
      const events: string[] = [];
      const overflows: number[] = [];
      const parser = new SseParser({ event: (data) => events.push(data), overflow: (length) => overflows.push(length) }, undefined, 100);
      parser.push('data: small\n\n');
      for (const chunk of chunks) parser.push(chunk);
      parser.push('\n\ndata: after\n\n');
      expect(events).toEqual(['small']);
      expect(overflows).toHaveLength(1);
      expect(overflows[0]).toBeGreaterThan(100);
    }
  });
});
