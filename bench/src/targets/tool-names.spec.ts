import { describe, expect, it } from 'vitest';
import type { CallOutcome, McpCaller, RpcRequest } from '../load/jsonrpc.js';
import { findPublicToolName, listAllTools } from './tool-names.js';

describe('findPublicToolName', () => {
  it('prefers the bare name', () => {
    expect(findPublicToolName(['payload', 'echo'], 'echo')).toBe('echo');
  });

  it('finds the name behind a namespace prefix', () => {
    expect(findPublicToolName(['bench__payload', 'bench__echo'], 'echo')).toBe('bench__echo');
    expect(findPublicToolName(['srv.echo'], 'echo')).toBe('srv.echo');
  });

  it('does not take a longer word that merely ends the same way', () => {
    expect(findPublicToolName(['bench__reecho', 'xecho'], 'echo')).toBeUndefined();
  });
});

describe('listAllTools', () => {
  it('follows nextCursor and counts pages', async () => {
    const pages: Record<string, { tools: { name: string }[]; nextCursor?: string }> = {
      '': { tools: [{ name: 'a' }, { name: 'b' }], nextCursor: 'p2' },
      p2: { tools: [{ name: 'c' }], nextCursor: 'p3' },
      p3: { tools: [{ name: 'd' }] },
    };
    const caller: McpCaller = {
      async call(request: RpcRequest): Promise<CallOutcome> {
        const params = JSON.parse(request.paramsJson) as { cursor?: string };
        return { ok: true, result: pages[params.cursor ?? '']! };
      },
    };
    expect(await listAllTools(caller)).toEqual({ names: ['a', 'b', 'c', 'd'], pages: 3 });
  });
});
