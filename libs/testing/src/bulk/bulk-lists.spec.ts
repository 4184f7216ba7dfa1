import { describe, expect, it } from 'vitest';
import { bulkOptionsFromEnv, bulkResources, bulkTools } from './bulk-lists.js';

describe('bulk lists', () => {
  const options = bulkOptionsFromEnv({ BULK_TOOLS: '5', BULK_RESOURCES: '2', BULK_PAGE_SIZE: '2', BULK_DESCRIPTION_BYTES: '3' });

  it('walks the list in order, page by page, and ends without a cursor', () => {
    const names: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = bulkTools(options, cursor);
      names.push(...page.items.map((item) => item.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(names).toEqual(['bulk_0000000', 'bulk_0000001', 'bulk_0000002', 'bulk_0000003', 'bulk_0000004']);
    expect(pages).toBe(3);
  });

  it('makes items of the asked description size', () => {
    expect(bulkResources(options, undefined)).toEqual({
      items: [
        { uri: 'bulk://item/0000000', name: 'item_0000000', description: 'xxx', mimeType: 'text/plain' },
        { uri: 'bulk://item/0000001', name: 'item_0000001', description: 'xxx', mimeType: 'text/plain' },
      ],
    });
  });

  it('refuses malformed variables and cursors', () => {
    expect(() => bulkOptionsFromEnv({ BULK_TOOLS: 'many' })).toThrow(/BULK_TOOLS must be a non-negative integer/);
    expect(() => bulkOptionsFromEnv({ BULK_PAGE_SIZE: '0' })).toThrow(/at least 1/);
    expect(() => bulkTools(options, 'abc')).toThrow(/invalid cursor/);
  });
});
