import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SERVES_NOTHING_WARNING, capabilityWarning, logCapabilityWarning } from './served-capabilities.js';

describe('capabilityWarning', () => {
  it('warns of an upstream that declared none of tools, resources or prompts, whatever else it declared', () => {
    expect(capabilityWarning({})).toBe(SERVES_NOTHING_WARNING);
    expect(capabilityWarning({ completions: {}, logging: {} })).toBe(SERVES_NOTHING_WARNING);
  });

  it('says nothing of one that declared any of them', () => {
    expect(capabilityWarning({ tools: {} })).toBeUndefined();
    expect(capabilityWarning({ resources: { subscribe: true } })).toBeUndefined();
    expect(capabilityWarning({ prompts: {}, logging: {} })).toBeUndefined();
  });

  it('is logged at the connect that brings it, not again at a reconnect with the same', () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    logCapabilityWarning(SERVES_NOTHING_WARNING, undefined, log);
    logCapabilityWarning(SERVES_NOTHING_WARNING, SERVES_NOTHING_WARNING, log);
    logCapabilityWarning(undefined, SERVES_NOTHING_WARNING, log);
    expect(lines).toMatchObject([{ level: 40, msg: `upstream ${SERVES_NOTHING_WARNING}` }]);
  });
});
