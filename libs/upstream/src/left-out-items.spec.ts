import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LeftOutItems } from './left-out-items.js';

function logLines() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

const taskOnly = { count: 1, examples: ['"simulate-research-query": it can only be called as a task'] };

describe('LeftOutItems', () => {
  it('warns once for reads that leave out the same items (the read at connect and the list_changed ones after it)', () => {
    const { log, lines } = logLines();
    const items = new LeftOutItems(log);
    items.record('tools/list', taskOnly);
    items.record('tools/list', { ...taskOnly, examples: [...taskOnly.examples] });
    items.record('tools/list', taskOnly);
    expect(lines.map((l) => l['msg'])).toEqual(['tools/list: 1 item left out that no host could be served']);
    expect(lines[0]).toMatchObject({ method: 'tools/list', dropped: 1, examples: taskOnly.examples });
  });

  it('warns again when what is left out changes, or comes back after a whole read; each list on its own', () => {
    const { log, lines } = logLines();
    const items = new LeftOutItems(log);
    items.record('tools/list', taskOnly);
    items.record('prompts/list', taskOnly);
    items.record('tools/list', { count: 2, examples: [...taskOnly.examples, '"x": no inputSchema'] });
    items.record('tools/list', undefined);
    items.record('tools/list', taskOnly);
    expect(lines.map((l) => `${l['method']} ${l['dropped']}`)).toEqual(['tools/list 1', 'prompts/list 1', 'tools/list 2', 'tools/list 1']);
  });
});
