import { describe, expect, it } from 'vitest';
import { accepts } from './accept-header.js';

const JSON_TYPE = 'application/json';
const SSE = 'text/event-stream';

describe('accepts (the Accept header, RFC 9110 section 12.5.1)', () => {
  it.each([
    ['application/json, text/event-stream', JSON_TYPE],
    ['application/json, text/event-stream', SSE],
    ['*/*', SSE],
    ['application/*', JSON_TYPE],
    ['text/*;q=0.5', SSE],
    ['Application/JSON', JSON_TYPE],
    ['application/json ; charset="utf-8" ; q=0.001', JSON_TYPE],
    ['application/json;q=1.000', JSON_TYPE],
    // A weight that is no qvalue does not take the acceptance away: only 0 does.
    ['application/json;q=high', JSON_TYPE],
    ['application/json;q=1.5', JSON_TYPE],
    // The more specific range has precedence, whatever its place.
    ['application/json, */*;q=0', JSON_TYPE],
    ['text/*;q=0, text/event-stream', SSE],
    // A quoted parameter may hold , and ; without starting another element.
    ['text/plain;x="a,text/event-stream;q=0", text/event-stream', SSE],
  ])('%j accepts %s', (header, type) => {
    expect(accepts(header, type)).toBe(true);
  });

  it.each([
    [undefined, JSON_TYPE],
    ['', JSON_TYPE],
    ['text/event-stream', JSON_TYPE],
    ['application/json;q=0', JSON_TYPE],
    ['application/json; Q=0.000', JSON_TYPE],
    ['application/json;q="0.0"', JSON_TYPE],
    ['text/event-stream;q=0, application/json', SSE],
    ['*/*, application/json;q=0', JSON_TYPE],
    ['application/*, application/json;q=0', JSON_TYPE],
    ['*/*;q=0', SSE],
    ['text/*;q=0', SSE],
    ['application/json-seq, text/event-streams', JSON_TYPE],
    ['application/json-seq, text/event-streams', SSE],
    ['json, /event-stream, text/', SSE],
    ['text/plain;x="a,text/event-stream", text/plain', SSE],
  ])('%j does not accept %s', (header, type) => {
    expect(accepts(header, type)).toBe(false);
  });
});
