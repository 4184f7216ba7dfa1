import { describe, expect, it } from 'vitest';
import { formatTable } from './text-table.js';

describe('formatTable', () => {
  it('pads columns two spaces apart, numbers right-aligned', () => {
    expect(formatTable(['TOOL', 'CALLS'], [['fx__echo', 12], ['fx__add', 3]])).toBe('TOOL      CALLS\nfx__echo     12\nfx__add       3\n');
  });

  it('lets no cell forge a column or a line: a host-chosen tool name is shown as in a tail line', () => {
    const table = formatTable(['TOOL', 'UPSTREAM', 'CALLS'], [['fake  evil\nfx__x', 'fx', 1]]);
    const lines = table.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1].split(/ {2,}/)).toEqual(['"fake\\u0020\\u0020evil\\nfx__x"', 'fx', '1']);
  });
});
