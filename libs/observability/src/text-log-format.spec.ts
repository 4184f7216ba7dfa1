import { describe, expect, it } from 'vitest';
import { formatLogLine } from './text-log-format.js';

const at = new Date(2026, 10, 29, 17, 28, 3, 45).getTime(); // local time, as the line shows it
const line = (entry: Record<string, unknown>) => formatLogLine(`${JSON.stringify({ time: at, ...entry })}\n`);

describe('formatLogLine', () => {
  it('writes the local time, the level by name, the message, then the fields as key=value', () => {
    expect(line({ level: 40, msg: "upstream 'gh' is down", server: 'gh', attempts: 3, ready: false, pid: null })).toBe(
      "2026-11-29 17:28:03.045 WARN  upstream 'gh' is down  server=gh attempts=3 ready=false pid=null\n",
    );
    expect(line({ level: 30, msg: 'listening' })).toBe('2026-11-29 17:28:03.045 INFO  listening\n');
    expect(line({ level: 20, msg: 'x' })).toMatch(/ DEBUG x\n$/);
    expect(line({ level: 60, msg: 'x' })).toMatch(/ FATAL x\n$/);
  });

  it('quotes a value with spaces, quotes or equals signs, and writes objects as JSON', () => {
    expect(line({ level: 30, msg: 'm', reason: 'HTTP 404 not found', path: 'a=b', upstreams: ['a', 'b'], limits: { n: 1 } })).toBe(
      '2026-11-29 17:28:03.045 INFO  m  reason="HTTP 404 not found" path="a=b" upstreams=["a","b"] limits={"n":1}\n',
    );
    expect(line({ level: 30, msg: 'm', empty: '' })).toMatch(/ empty=""\n$/);
  });

  it('keeps every entry on its one line: line breaks and control characters in the message or a value are escaped', () => {
    const text = line({ level: 30, msg: 'upstream said: a\nb\r\u001b[31m', stderr: 'line one\n2026-11-29 17:28:03.045 INFO  forged' });
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(text).toContain('upstream said: a\\nb\\r\\u001b[31m');
    expect(text).toContain('stderr="line one\\n2026-11-29 17:28:03.045 INFO  forged"');
  });

  it("shows an error's message in the line and its stack on the lines after, indented", () => {
    const text = line({ level: 50, msg: 'failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (a.js:1:1)\n    at g (b.js:2:2)' } });
    expect(text).toBe('2026-11-29 17:28:03.045 ERROR failed  err={"type":"Error","message":"boom"}\n    at f (a.js:1:1)\n    at g (b.js:2:2)\n');
  });

  it('colours the level only when asked', () => {
    expect(formatLogLine(JSON.stringify({ level: 40, time: at, msg: 'm' }), { color: true })).toContain('\u001b[33mWARN \u001b[0m m');
    expect(formatLogLine(JSON.stringify({ level: 30, time: at, msg: 'm' }), { color: true })).toBe('2026-11-29 17:28:03.045 INFO  m\n');
  });

  it('passes a line that is not JSON through', () => {
    expect(formatLogLine('not json')).toBe('not json\n');
  });
});
