import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MAX_CURSOR_CHARS, MAX_LIST_PAGES, readList } from './list-reader.js';

type Item = Record<string, unknown>;

const tool = (n: number) => ({ name: `t${n}`, inputSchema: { type: 'object' } });
const wide = { maxItems: 1_000_000, maxBytes: 1 << 30 };

/** An upstream's list of `total` tools in pages of `pageSize`; counts the pages asked for. */
function upstream(total: number, pageSize: number) {
  const asked: Array<string | undefined> = [];
  const page = async (cursor: string | undefined): Promise<Item> => {
    asked.push(cursor);
    const start = cursor === undefined ? 0 : Number(cursor);
    const end = Math.min(total, start + pageSize);
    const tools = Array.from({ length: end - start }, (_, i) => tool(start + i));
    return end < total ? { tools, nextCursor: String(end) } : { tools };
  };
  return { page, asked };
}

function logLines() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

describe('readList', () => {
  it('reads every page of a list under its limits', async () => {
    const { page, asked } = upstream(25, 10);
    const { log, lines } = logLines();
    const read = await readList(page, 'tools/list', 'tools', wide, log);
    expect(read.items.map((t) => t['name'])).toEqual(Array.from({ length: 25 }, (_, i) => `t${i}`));
    expect(read.cut).toBeUndefined();
    expect(asked).toEqual([undefined, '10', '20']);
    expect(lines).toEqual([]);
  });

  it('fails a read whose page has no list under its key, on the first page or a later one', async () => {
    const { log } = logLines();
    for (const pages of [[{ items: [tool(1)] }], [{ tools: [tool(1)], nextCursor: 'next' }, { tools: 'none' }]]) {
      const page = async (cursor: string | undefined): Promise<Item> => pages[cursor === undefined ? 0 : 1]!;
      await expect(readList(page, 'tools/list', 'tools', wide, log)).rejects.toThrow("the tools/list result has no 'tools' list");
    }
  });

  it('serves task-only tools when the upstream runs tool calls as tasks, and names them; leaves them out when it does not', async () => {
    const tools = [tool(0), { ...tool(1), execution: { taskSupport: 'required' } }, { ...tool(2), execution: { taskSupport: 'optional' } }];
    const page = async (): Promise<Item> => ({ tools });
    const { log, lines } = logLines();
    const runs = await readList(page, 'tools/list', 'tools', wide, log, true);
    expect(runs.items.map((t) => t['name'])).toEqual(['t0', 't1', 't2']);
    expect(runs.items.filter((t) => 'execution' in t)).toEqual([]);
    expect(runs.taskOnly).toEqual(['t1']);
    // Those a host may call as a task or not, for the hosts the gateway relays tasks for.
    expect(runs.taskOptional).toEqual(['t2']);
    const runsNot = await readList(page, 'tools/list', 'tools', wide, log);
    expect(runsNot.items.map((t) => t['name'])).toEqual(['t0', 't2']);
    expect(runsNot.taskOnly).toBeUndefined();
    expect(runsNot.leftOut).toEqual({ count: 1, examples: [expect.stringMatching(/^"t1": it can only be called as a task/)] });
    expect(runs.leftOut).toBeUndefined();
    // The caller logs what was left out (LeftOutItems), once for a list, not readList at every read.
    expect(lines).toEqual([]);
    expect(runsNot.taskOptional).toBeUndefined();
  });

  it('keeps the first maxItems in upstream order and asks for no page after the cut', async () => {
    const { page, asked } = upstream(100_000, 1000);
    const { log } = logLines();
    const read = await readList(page, 'tools/list', 'tools', { ...wide, maxItems: 2500 }, log);
    expect(read.items).toHaveLength(2500);
    expect(read.items[0]).toEqual(tool(0));
    expect(read.items[2499]).toEqual(tool(2499));
    expect(read.cut).toEqual({ method: 'tools/list', kept: 2500, limit: 'maxItems', max: 2500 });
    expect(asked).toEqual([undefined, '1000', '2000']);
  });

  it('cuts at maxBytes', async () => {
    const { page } = upstream(50, 10);
    const size = Buffer.byteLength(JSON.stringify(tool(10)));
    const { log } = logLines();
    const read = await readList(page, 'tools/list', 'tools', { ...wide, maxBytes: 3 * size + 5 }, log);
    expect(read.items.map((t) => t['name'])).toEqual(['t0', 't1', 't2']);
    expect(read.cut).toMatchObject({ kept: 3, limit: 'maxBytes' });
  });

  it('a list of exactly maxItems is whole: the next page is asked for to know there is no more', async () => {
    const { page, asked } = upstream(20, 10);
    const { log } = logLines();
    const read = await readList(page, 'tools/list', 'tools', { ...wide, maxItems: 20 }, log);
    expect(read.items).toHaveLength(20);
    expect(read.cut).toBeUndefined();
    expect(asked).toEqual([undefined, '10']);
  });

  it('does not count items no host could be served against the limits, and says which it left out', async () => {
    const page = async (): Promise<Item> => ({ tools: [{ name: 'bad', inputSchema: 'x' }, tool(1), { inputSchema: { type: 'object' } }, tool(2)] });
    const { log, lines } = logLines();
    const read = await readList(page, 'tools/list', 'tools', { ...wide, maxItems: 2 }, log);
    expect(read.items).toEqual([tool(1), tool(2)]);
    expect(read.cut).toBeUndefined();
    expect(read.leftOut).toEqual({ count: 2, examples: [expect.stringMatching(/^"bad": /), expect.any(String)] });
    // The connection logs them (LeftOutItems), once for reads that leave out the same.
    expect(lines).toEqual([]);
  });

  it(`stops a cursor that never ends after ${MAX_LIST_PAGES} pages`, async () => {
    let n = 0;
    const page = async (): Promise<Item> => ({ tools: [], nextCursor: String(n++) });
    const { log, lines } = logLines();
    const read = await readList(page, 'tools/list', 'tools', wide, log);
    expect(read).toEqual({ items: [] });
    expect(n).toBe(MAX_LIST_PAGES);
    expect(lines.map((l) => l['msg'])).toEqual([`tools/list: stopped after ${MAX_LIST_PAGES} pages; the rest of the list is not served`]);
  });

  it(`follows a cursor of ${MAX_CURSOR_CHARS} characters, and none longer`, async () => {
    const asked: Array<string | undefined> = [];
    const page = async (cursor: string | undefined): Promise<Item> => {
      asked.push(cursor);
      return { tools: [tool(asked.length)], nextCursor: `${asked.length}`.padEnd(MAX_CURSOR_CHARS + asked.length - 1, 'c') };
    };
    const { log, lines } = logLines();
    const read = await readList(page, 'tools/list', 'tools', wide, log);
    // The first cursor is exactly at the limit and is followed; the second is one over.
    expect(read.items.map((t) => t['name'])).toEqual(['t1', 't2']);
    expect(asked.map((c) => c?.length)).toEqual([undefined, MAX_CURSOR_CHARS]);
    expect(lines.map((l) => l['msg'])).toEqual([
      `tools/list: the upstream's nextCursor is longer than ${MAX_CURSOR_CHARS} characters; the rest of the list is not served`,
    ]);
  });
});
