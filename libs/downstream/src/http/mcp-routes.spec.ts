import { describe, expect, it } from 'vitest';
import { pathOf } from './mcp-routes.js';

describe('pathOf', () => {
  it('drops the query string and one trailing slash, as the framework router matched', () => {
    expect(pathOf('/mcp')).toBe('/mcp');
    expect(pathOf('/mcp/')).toBe('/mcp');
    expect(pathOf('/messages?sessionId=abc')).toBe('/messages');
    expect(pathOf('/messages/?sessionId=abc')).toBe('/messages');
    expect(pathOf('/')).toBe('/');
    expect(pathOf(undefined)).toBe('/');
  });

  it('does not match look-alikes', () => {
    expect(pathOf('/mcpx')).toBe('/mcpx');
    expect(pathOf('/mcp/extra')).toBe('/mcp/extra');
    expect(pathOf('//mcp')).toBe('//mcp');
  });
});
