import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CappedList, CutLists } from './list-cap.js';

const tool = (n: number, description = '') => ({ name: `t${n}`, description, inputSchema: { type: 'object' } });
const bytesOf = (item: unknown) => Buffer.byteLength(JSON.stringify(item));

describe('CappedList', () => {
  it('keeps the first maxItems items, in order, and takes nothing after the first refused', () => {
    const list = new CappedList({ maxItems: 2, maxBytes: 1_000_000 });
    expect([tool(1), tool(2), tool(3)].map((t) => list.add(t))).toEqual([true, true, false]);
    expect(list.items).toEqual([tool(1), tool(2)]);
    expect(list.cutOf('tools/list')).toEqual({ method: 'tools/list', kept: 2, limit: 'maxItems', max: 2 });
  });

  it("counts maxBytes over the entries' JSON in UTF-8, and a smaller later item does not slip in", () => {
    const big = tool(2, 'é'.repeat(100));
    const maxBytes = bytesOf(tool(1)) + bytesOf(big) - 1;
    const list = new CappedList({ maxItems: 10, maxBytes });
    expect(list.add(tool(1))).toBe(true);
    // 100 characters, 200 bytes: counted as the bytes they are.
    expect(list.add(big)).toBe(false);
    expect(list.add(tool(3))).toBe(false);
    expect(list.items).toEqual([tool(1)]);
    expect(list.cutOf('tools/list')).toEqual({ method: 'tools/list', kept: 1, limit: 'maxBytes', max: maxBytes });
  });

  it('takes a list that fits exactly, and says nothing was cut', () => {
    const items = [tool(1), tool(2)];
    const list = new CappedList({ maxItems: 2, maxBytes: bytesOf(items[0]) + bytesOf(items[1]) });
    for (const item of items) expect(list.add(item)).toBe(true);
    expect(list.cutOf('tools/list')).toBeUndefined();
  });
});

describe('CutLists', () => {
  function setup() {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    return { lines, cuts: new CutLists('files', log) };
  }
  const cut = (kept: number, limit: 'maxItems' | 'maxBytes' = 'maxItems', max = kept) => ({ method: 'resources/list', kept, limit, max });

  it('warns once, naming the upstream, list and limit, however often the list is read over it', () => {
    const { lines, cuts } = setup();
    cuts.record('resources/list', cut(100));
    cuts.record('resources/list', cut(100));
    cuts.record('resources/list', cut(100));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: 'resources/list', kept: 100, limit: 'maxItems', max: 100 });
    expect(lines[0]!['msg']).toBe(
      "resources/list of upstream 'files' passes lists.maxItems (100): only its first 100 items are served; raise lists.maxItems for this server to serve more",
    );
    expect(cuts.all()).toEqual([cut(100)]);
  });

  it('warns again when another limit cuts the list, or it is cut again after a whole read', () => {
    const { lines, cuts } = setup();
    cuts.record('resources/list', cut(100));
    cuts.record('resources/list', cut(40, 'maxBytes', 8192));
    expect(cuts.all()).toEqual([cut(40, 'maxBytes', 8192)]);
    cuts.record('resources/list', undefined);
    expect(cuts.all()).toEqual([]);
    cuts.record('resources/list', cut(40, 'maxBytes', 8192));
    expect(lines.map((l) => l['limit'])).toEqual(['maxItems', 'maxBytes', 'maxBytes']);
  });
});
