import { McpError, type JsonRpcNotification } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import type { DownstreamSession } from '../session.js';
import { UrlElicitations } from './url-elicitations.js';

/** A host that records what it is sent. */
function host(elicitation: Record<string, unknown>) {
  const sent: JsonRpcNotification[] = [];
  const session = { clientCapabilities: { elicitation }, send: async (n: JsonRpcNotification) => void sent.push(n) } as unknown as DownstreamSession;
  return { session, sent };
}

const complete = (elicitationId: string): JsonRpcNotification => ({ jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId } });
const required = (...ids: string[]) =>
  new McpError(-32042, 'URL elicitation required', { elicitations: ids.map((elicitationId) => ({ mode: 'url', elicitationId, url: 'https://a.example/', message: 'm' })) });

describe('UrlElicitations', () => {
  it('sends the completion of each elicitation a -32042 listed to the host whose call got it, once', () => {
    const urls = new UrlElicitations(() => 60_000);
    const { session, sent } = host({ url: {} });
    urls.failed(session, 'auth', required('e1', 'e2'));
    urls.notification('auth', complete('e1'));
    urls.notification('auth', complete('e1'));
    urls.notification('auth', complete('e2'));
    expect(sent).toEqual([complete('e1'), complete('e2')]);
  });

  it('keeps each upstream\'s ids apart, and tells a host without url mode nothing', () => {
    const urls = new UrlElicitations(() => 60_000);
    const urlHost = host({ url: {} });
    const formHost = host({});
    urls.given(urlHost.session, 'auth', 'same');
    urls.failed(formHost.session, 'pay', required('x'));
    urls.failed(urlHost.session, 'pay', new McpError(-32602, 'bad', { elicitations: [{ mode: 'url', elicitationId: 'y' }] }));
    for (const id of ['same', 'x', 'y']) urls.notification('pay', complete(id));
    expect([urlHost.sent, formHost.sent]).toEqual([[], []]);
    urls.notification('auth', complete('same'));
    expect(urlHost.sent).toEqual([complete('same')]);
  });

  it('forgets an elicitation after its time', () => {
    let ttl = 60_000;
    const urls = new UrlElicitations(() => ttl);
    const { session, sent } = host({ url: {} });
    ttl = -1;
    urls.given(session, 'auth', 'old');
    urls.notification('auth', complete('old'));
    expect(sent).toEqual([]);
  });
});
