import { describe, expect, it } from 'vitest';
import { parseOptions } from './options.js';

describe('parseOptions', () => {
  it('has defaults sized for a run of about five minutes', () => {
    const options = parseOptions([]);
    expect(options).toMatchObject({ rounds: 3, auditRounds: 5, durationS: 3, concurrency: [1, 16, 64], skipExtras: false, quick: false });
    expect(options !== 'help' && options.targets).toEqual(['direct-http', 'direct-stdio', 'switchboard-stdio', 'switchboard-http', 'mcp-proxy']);
  });

  it('--quick shrinks the run, and explicit flags still win', () => {
    expect(parseOptions(['--quick'])).toMatchObject({ rounds: 1, auditRounds: 1, durationS: 1, quick: true, idleSessions: 200, writerDurationS: 1 });
    expect(parseOptions(['--quick', '--rounds', '2'])).toMatchObject({ rounds: 2, durationS: 1 });
  });

  it('parses lists and flags', () => {
    expect(parseOptions(['--concurrency', '1, 8', '--targets', 'direct-http,mcp-proxy', '--skip-extras', '--duration', '0.5'])).toMatchObject({
      concurrency: [1, 8],
      targets: ['direct-http', 'mcp-proxy'],
      skipExtras: true,
      durationS: 0.5,
      payloadDurationS: 0.5,
      writerDurationS: 0.5,
    });
  });

  it('returns help for --help', () => {
    expect(parseOptions(['--help'])).toBe('help');
  });

  it('rejects bad values with the reason', () => {
    expect(() => parseOptions(['--rounds', '0'])).toThrow(/--rounds must be a positive integer/);
    expect(() => parseOptions(['--audit-rounds', 'x'])).toThrow(/--audit-rounds must be a positive integer/);
    expect(() => parseOptions(['--duration', 'x'])).toThrow(/--duration/);
    expect(() => parseOptions(['--targets', 'nginx'])).toThrow(/unknown target "nginx"/);
    expect(() => parseOptions(['--bogus'])).toThrow();
  });
});
