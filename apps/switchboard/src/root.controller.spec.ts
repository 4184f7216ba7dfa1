import { describe, expect, it } from 'vitest';
import { rootPageText } from './root.controller.js';

describe('rootPageText', () => {
  it('names the inbox only where the process serves it', () => {
    expect(rootPageText(true)).toContain('/admin/inbox');
    expect(rootPageText(false)).not.toContain('/admin/inbox');
    expect(rootPageText(false)).toContain('/mcp');
  });
});
