import type { ServerRequest, UpstreamConnection } from '@switchboard/upstream';
import { describe, expect, it } from 'vitest';
import type { RelayServices } from '../relay.types.js';
import { SessionDirectory, type DownstreamSession } from '../session.js';
import { ServerRequestRelay } from './server-request-relay.js';

type Item = Record<string, unknown>;

/**
 * Relays one sampling request, caused by a host that declared sampling (with tools) on
 * `protocolVersion`, under a policy that allows it; returns what the host was sent.
 */
async function sampled(params: Item, protocolVersion = '2025-11-25'): Promise<Item> {
  const sent: Item[] = [];
  const session = {
    id: 's',
    protocolVersion,
    principal: { id: 'alice', authMethod: 'api-key' },
    clientCapabilities: { sampling: { tools: {} } },
    clientInfo: { name: 'host', version: '1' },
    initialized: true,
    request: async (_method: string, outgoing: Item) => {
      sent.push(outgoing);
      return { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' };
    },
  } as unknown as DownstreamSession;
  const sessions = new SessionDirectory();
  sessions.add(session);
  const services = { sessions, policy: { decide: () => ({ allowed: true, rule: 'sampling-ok' }) } } as unknown as RelayServices;
  const relay = new ServerRequestRelay(services, () => ({ timeoutMs: 1000, maxSamplingTokens: 100, inbox: false }));
  // The request of the host's whose response stream carried the question.
  const origin = { session, requestId: 1 };
  await relay.handle({
    connection: { name: 'notes' } as UpstreamConnection,
    request: { jsonrpc: '2.0', id: 7, method: 'sampling/createMessage', params },
    signal: new AbortController().signal,
    related: true,
    candidates: [origin],
    attribute: () => undefined,
  } as ServerRequest);
  return sent[0];
}

describe('sampling through the relay', () => {
  const messages = [{ role: 'user', content: { type: 'text', text: 'Summarise' } }];

  it("asks for no context instead of the gateway's (every upstream's) when an upstream asks for its own", async () => {
    expect(await sampled({ messages, maxTokens: 50, includeContext: 'thisServer' })).toEqual({ messages, maxTokens: 50, includeContext: 'none' });
  });

  it("asks for no context when an upstream asks for every server's: servers must not see into one another", async () => {
    expect(await sampled({ messages, maxTokens: 50, includeContext: 'allServers' })).toEqual({ messages, maxTokens: 50, includeContext: 'none' });
  });

  it('caps maxTokens and leaves the other choices as asked', async () => {
    expect(await sampled({ messages, maxTokens: 5000, includeContext: 'none', temperature: 0.2 })).toEqual({
      messages,
      maxTokens: 100,
      includeContext: 'none',
      temperature: 0.2,
    });
  });

  it("goes in the shape of the host's revision: one block a message before 2025-11-25, and no audio before 2025-03-26", async () => {
    const listed = [{ role: 'user', content: [{ type: 'text', text: 'Hear' }, { type: 'audio', data: 'AA==', mimeType: 'audio/wav' }] }];
    expect(await sampled({ messages: listed, maxTokens: 50 })).toEqual({ messages: listed, maxTokens: 50 });
    expect(await sampled({ messages: listed, maxTokens: 50 }, '2025-03-26')).toEqual({
      messages: [{ role: 'user', content: listed[0].content[0] }, { role: 'user', content: listed[0].content[1] }],
      maxTokens: 50,
    });
    expect(((await sampled({ messages: listed, maxTokens: 50 }, '2024-11-05')).messages as Item[])[1]).toEqual({
      role: 'user',
      content: { type: 'text', text: expect.stringContaining('audio/wav') },
    });
  });

  it('is refused with tools for a host whose revision has no tool use in sampling, though it declared sampling.tools', async () => {
    const tools = [{ name: 'lookup', inputSchema: { type: 'object' } }];
    expect(await sampled({ messages, maxTokens: 50, tools })).toEqual({ messages, maxTokens: 50, tools });
    await expect(sampled({ messages, maxTokens: 50, tools }, '2025-06-18')).rejects.toMatchObject({
      code: -32602,
      message: 'The host that caused this request speaks MCP 2025-06-18, which has no tool use in sampling',
    });
  });

  it('refuses a request a host could not answer, or whose maxTokens no cap could apply to, before any host sees it', async () => {
    for (const [params, problem] of [
      [{ bogus: true }, /messages must be a non-empty list.*maxTokens must be a positive integer/],
      [{ messages: 'x', maxTokens: 'lots' }, /messages must be a non-empty list/],
      [{ messages, maxTokens: 'lots' }, /maxTokens must be a positive integer/],
      [{ messages: [{ role: 'system', content: { type: 'text', text: 'x' } }], maxTokens: 5 }, /messages\[0\] must have role user or assistant/],
      [{ messages, maxTokens: 5, includeContext: 'everything' }, /includeContext must be one of none, thisServer, allServers/],
      [{ messages, maxTokens: 5, includeContext: 'AllServers' }, /includeContext must be one of/],
    ] as const) {
      await expect(sampled(params), JSON.stringify(params)).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(problem) });
    }
  });
});
