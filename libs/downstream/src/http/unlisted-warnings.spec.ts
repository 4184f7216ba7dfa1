import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HttpRefusal } from './request-guard.js';
import { MAX_NAMED_CHARS, NAMED_PER_HOUR, UnlistedWarnings } from './unlisted-warnings.js';

const HOUR = 3_600_000;

function logLines() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

const host = (value: string): HttpRefusal => ({
  httpMethod: 'GET',
  path: '/mcp',
  decision: 'refused',
  rule: 'security:host',
  reason: `Host '${value}' is not allowed`,
  unlisted: { setting: 'security.allowedHosts', value },
});
const origin = (value: string): HttpRefusal => ({
  httpMethod: 'GET',
  path: '/',
  decision: 'refused',
  rule: 'security:origin',
  reason: `Origin '${value}' is not allowed`,
  unlisted: { setting: 'security.allowedOrigins', value },
});

afterEach(() => vi.useRealTimers());

describe('UnlistedWarnings', () => {
  it('names a refused Host with security.allowedHosts and an Origin with security.allowedOrigins', () => {
    const { log, lines } = logLines();
    const warnings = new UnlistedWarnings(log);
    warnings.listener(host('gateway.example:8780'));
    warnings.listener(origin('https://tools.example.com'));
    expect(lines).toMatchObject([
      { level: 40, host: 'gateway.example:8780', setting: 'security.allowedHosts' },
      { level: 40, origin: 'https://tools.example.com', setting: 'security.allowedOrigins' },
    ]);
    expect(lines[0]!['msg']).toMatch(/Host 'gateway\.example:8780'.*add it to security\.allowedHosts/);
    expect(lines[1]!['msg']).toMatch(/Origin 'https:\/\/tools\.example\.com'.*add it to security\.allowedOrigins/);
    warnings.stop();
  });

  it('says nothing of refusals no setting would admit: a malformed Host, a missing credential', () => {
    const { log, lines } = logLines();
    const warnings = new UnlistedWarnings(log);
    warnings.listener({ httpMethod: 'GET', path: '/', decision: 'refused', rule: 'security:host', reason: "Host 'a@b' is not a host name and port" });
    warnings.listener({ httpMethod: 'POST', path: '/mcp', decision: 'unauthenticated', rule: 'auth:missing', reason: 'no credential' } as HttpRefusal);
    warnings.stop();
    expect(lines).toEqual([]);
  });

  it('names each value at most once an hour, a Host and an Origin of the same text apart', () => {
    vi.useFakeTimers();
    const { log, lines } = logLines();
    const warnings = new UnlistedWarnings(log);
    warnings.listener(host('a.example'));
    warnings.listener(origin('a.example'));
    vi.advanceTimersByTime(HOUR - 1);
    warnings.listener(host('a.example'));
    warnings.listener(origin('a.example'));
    expect(lines).toHaveLength(2);
    vi.advanceTimersByTime(1);
    warnings.listener(host('a.example'));
    expect(lines.map((l) => l['host'] ?? l['origin'])).toEqual(['a.example', 'a.example', 'a.example']);
    warnings.stop();
  });

  it(`names ${NAMED_PER_HOUR} values an hour; the refusals past that are counted in one line at the hour's end`, () => {
    vi.useFakeTimers();
    const { log, lines } = logLines();
    const warnings = new UnlistedWarnings(log);
    for (let i = 0; i < 100; i++) warnings.listener(host(`h${i}.example`));
    warnings.listener(host('h0.example')); // named already: neither named again nor counted
    warnings.listener(origin('https://late.example')); // past the cap, whichever header
    expect(lines).toHaveLength(NAMED_PER_HOUR);
    vi.advanceTimersByTime(HOUR - 1);
    expect(lines).toHaveLength(NAMED_PER_HOUR);
    vi.advanceTimersByTime(1);
    expect(lines).toHaveLength(NAMED_PER_HOUR + 1);
    const overflow = lines.at(-1)!;
    expect(overflow).toMatchObject({ level: 40, unnamed: 100 - NAMED_PER_HOUR + 1 });
    expect(overflow['msg']).toMatch(/^69 more requests .*security\.allowedHosts.*security\.allowedOrigins/);
    // A new hour: new names are named again, and without more overflow no second count.
    warnings.listener(host('h99.example'));
    vi.advanceTimersByTime(2 * HOUR);
    expect(lines.slice(NAMED_PER_HOUR + 1).map((l) => l['host'])).toEqual(['h99.example']);
    warnings.stop();
  });

  it('stop() says the count not yet said, and stops its timer', () => {
    vi.useFakeTimers();
    const { log, lines } = logLines();
    const warnings = new UnlistedWarnings(log);
    for (let i = 0; i <= NAMED_PER_HOUR; i++) warnings.listener(host(`h${i}.example`));
    warnings.stop();
    expect(lines.at(-1)).toMatchObject({ unnamed: 1 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it(`cuts a value to ${MAX_NAMED_CHARS} characters and writes control characters as escapes, so no line can be forged`, () => {
    const { log, lines } = logLines();
    const warnings = new UnlistedWarnings(log);
    const forged = 'https://x.example\n{"level":30,"msg":"all fine"}\r\u0085\u2028\u202e\u001b[2J\u007f';
    warnings.listener(origin(forged));
    warnings.listener(origin(`https://${'a'.repeat(5000)}.example`));
    warnings.stop();
    const [escaped, long] = lines;
    for (const text of [escaped!['origin'], escaped!['msg'], long!['origin'], long!['msg']] as string[]) {
      expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    }
    expect(escaped!['origin']).toBe('https://x.example\\n{"level":30,"msg":"all fine"}\\r\\x85\\u2028\\u202e\\x1b[2J\\x7f');
    expect(long!['origin']).toHaveLength(MAX_NAMED_CHARS);
    expect(long!['origin']).toMatch(/^https:\/\/a+…$/);
    expect(long!['length']).toBe(5000 + 'https://.example'.length);
  });
});
