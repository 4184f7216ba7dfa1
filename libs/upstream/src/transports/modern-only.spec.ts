import { McpError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { HttpStatusError } from './http-status-error.js';
import { modernOnlyRefusal } from './modern-only.js';

const body = (error: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 0, error });

describe('modernOnlyRefusal', () => {
  it('reads -32022 with only revisions the gateway does not speak, from an HTTP 400 body or a stdio error', () => {
    const said = 'it speaks only MCP 2026-07-28 (the stateless revision), which Switchboard does not support yet; it speaks 2024-11-05 to 2025-11-25 to upstreams';
    const refusal = { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'] } };
    expect(modernOnlyRefusal(new HttpStatusError(400, 'Bad Request', body(refusal)))).toBe(said);
    expect(modernOnlyRefusal(new McpError(-32022, 'Unsupported protocol version', { supported: ['2026-07-28'] }))).toBe(said);
  });

  it('is nothing for any other failure, or a server that also speaks a revision the gateway does', () => {
    expect(modernOnlyRefusal(new HttpStatusError(400, 'Bad Request', body({ code: -32022, data: { supported: ['2026-07-28', '2025-11-25'] } })))).toBeUndefined();
    expect(modernOnlyRefusal(new HttpStatusError(404, 'Not Found', body({ code: -32022, data: { supported: ['2026-07-28'] } })))).toBeUndefined();
    expect(modernOnlyRefusal(new HttpStatusError(400, 'Bad Request', 'not json'))).toBeUndefined();
    expect(modernOnlyRefusal(new McpError(-32600, 'Invalid request'))).toBeUndefined();
    expect(modernOnlyRefusal(new McpError(-32022, 'Unsupported', { supported: [] }))).toBeUndefined();
    expect(modernOnlyRefusal(new Error('boom'))).toBeUndefined();
  });
});
