import { McpError, type JsonRpcNotification } from '@switchboard/core';
import type { UpstreamConnection } from '@switchboard/upstream';
import { describe, expect, it } from 'vitest';
import { ConnectionOwners } from '../connection-owners.js';
import { SessionDirectory, type DownstreamSession } from '../session.js';
import { MAX_ELICITATION_ID_CHARS, URL_ELICITATIONS_PER_SESSION, UrlElicitations } from './url-elicitations.js';

const sessions = new SessionDirectory();
const connectionTo = (name: string) => ({ name }) as UpstreamConnection;
/** The registry's (shared) connections to the servers 'auth' and 'pay'. */
const shared = new Map(['auth', 'pay'].map((name) => [name, connectionTo(name)]));
const auth = shared.get('auth')!;
const pay = shared.get('pay')!;
/** Alice's and Bob's own connections to the per-principal server 'own'. */
const own = new Map([connectionTo('own'), connectionTo('own')].map((c, i) => [c, i === 0 ? 'alice' : 'bob']));
const pool = {
  ownerOf: (connection: UpstreamConnection) => own.get(connection),
  existing: (server: string, owner: string) => [...own].find(([c, o]) => c.name === server && o === owner)?.[0],
};
const owners = new ConnectionOwners(shared, [pool]);
const urlElicitations = (ttl: () => number = () => 60_000) => new UrlElicitations(ttl, sessions, owners);
let hosts = 0;

/** A host, with a live session, that records what it is sent. */
function host(elicitation: Record<string, unknown>) {
  const sent: JsonRpcNotification[] = [];
  const session = { id: `s${++hosts}`, principal: { authMethod: 'api-key', id: 'alice' }, clientCapabilities: { elicitation }, send: async (n: JsonRpcNotification) => void sent.push(n) } as unknown as DownstreamSession;
  sessions.add(session);
  return { session, sent };
}

const complete = (elicitationId: string): JsonRpcNotification => ({ jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId } });
const required = (...ids: string[]) =>
  new McpError(-32042, 'URL elicitation required', { elicitations: ids.map((elicitationId) => ({ mode: 'url', elicitationId, url: 'https://a.example/', message: 'm' })) });

describe('UrlElicitations', () => {
  it('sends the completion of each elicitation a -32042 listed to the host whose call got it, once', () => {
    const urls = urlElicitations();
    const { session, sent } = host({ url: {} });
    urls.failed(session, auth, required('e1', 'e2'));
    urls.notification('auth', complete('e1'));
    urls.notification('auth', complete('e1'));
    urls.notification('auth', complete('e2'));
    expect(sent).toEqual([complete('e1'), complete('e2')]);
  });

  it("passes a completion on without the upstream's task id, should it name one", () => {
    const urls = urlElicitations();
    const { session, sent } = host({ url: {} });
    urls.given(session, auth, 'e1');
    urls.notification('auth', { ...complete('e1'), params: { elicitationId: 'e1', _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'up' } } } });
    expect(sent).toEqual([complete('e1')]);
  });

  it('keeps each upstream\'s ids apart, and tells a host without url mode nothing', () => {
    const urls = urlElicitations();
    const urlHost = host({ url: {} });
    const formHost = host({});
    urls.given(urlHost.session, auth, 'same');
    urls.failed(formHost.session, pay, required('x'));
    urls.failed(urlHost.session, pay, new McpError(-32602, 'bad', { elicitations: [{ mode: 'url', elicitationId: 'y' }] }));
    for (const id of ['same', 'x', 'y']) urls.notification('pay', complete(id));
    expect([urlHost.sent, formHost.sent]).toEqual([[], []]);
    urls.notification('auth', complete('same'));
    expect(urlHost.sent).toEqual([complete('same')]);
  });

  it("tells a completion of an owner's connection only to the host that connection told, though another owner's used the same id", () => {
    const urls = urlElicitations();
    const alice = host({ url: {} });
    const bob = host({ url: {} });
    const [aliceOwn, bobOwn] = [...own.keys()];
    urls.failed(alice.session, aliceOwn, required('1'));
    urls.failed(bob.session, bobOwn, required('1'));
    urls.given(alice.session, auth, '1');
    urls.notification('own', complete('1'), 'alice');
    expect([alice.sent, bob.sent]).toEqual([[complete('1')], []]);
    urls.notification('own', complete('1'), 'alice');
    urls.notification('own', complete('1'), 'bob');
    expect([alice.sent, bob.sent]).toEqual([[complete('1')], [complete('1')]]);
    // The shared connection's own '1' is apart from both.
    urls.notification('auth', complete('1'));
    expect(alice.sent).toEqual([complete('1'), complete('1')]);
  });

  it('relays the completion of an elicitation a replaced shared connection asked while finishing a call, as it tags it shared', () => {
    const urls = urlElicitations();
    const { session, sent } = host({ url: {} });
    // A config change replaced the registry's 'auth'; the old one is finishing alice's call.
    const replaced = connectionTo('auth');
    urls.failed(session, replaced, required('r1'));
    urls.given(session, replaced, 'r2');
    urls.notification('auth', complete('r1'));
    urls.notification('auth', complete('r2'));
    expect(sent).toEqual([complete('r1'), complete('r2')]);
  });

  it('forgets an elicitation after its time', () => {
    let ttl = 60_000;
    const urls = urlElicitations(() => ttl);
    const { session, sent } = host({ url: {} });
    ttl = -1;
    urls.given(session, auth, 'old');
    urls.notification('auth', complete('old'));
    expect(sent).toEqual([]);
  });

  it('forgets the elicitations of a host whose session ended at once, and takes none for an ended session', () => {
    const urls = urlElicitations();
    const gone = host({ url: {} });
    const staying = host({ url: {} });
    for (let i = 0; i < 50; i++) urls.given(gone.session, auth, `g${i}`);
    urls.failed(gone.session, pay, required('p1', 'p2'));
    urls.given(staying.session, auth, 'kept');
    expect(urls.size).toBe(53);

    sessions.remove(gone.session.id);
    expect(urls.size).toBe(1);
    // A -32042 or an accept that arrives after the session ended.
    urls.failed(gone.session, pay, required('late'));
    urls.given(gone.session, auth, 'late');
    expect(urls.size).toBe(1);
    urls.notification('auth', complete('g0'));
    urls.notification('auth', complete('kept'));
    expect([gone.sent, staying.sent]).toEqual([[], [complete('kept')]]);
    expect(urls.size).toBe(0);
  });

  it('keeps the first ones a -32042 lists, as many as a session may wait on, however many it lists', () => {
    const urls = urlElicitations();
    const { session, sent } = host({ url: {} });
    const ids = Array.from({ length: 100_000 }, (_, i) => `e${i}`);
    urls.failed(session, auth, required(...ids));
    expect(urls.size).toBe(URL_ELICITATIONS_PER_SESSION);
    urls.notification('auth', complete(`e${URL_ELICITATIONS_PER_SESSION}`));
    urls.notification('auth', complete('e0'));
    expect(sent).toEqual([complete('e0')]);
  });

  it('keeps no id over the length limit, logs how many a -32042 listed, and keeps the others', () => {
    const warned: unknown[][] = [];
    const urls = new UrlElicitations(() => 60_000, sessions, owners, { warn: (...args: unknown[]) => void warned.push(args) });
    const { session, sent } = host({ url: {} });
    const longest = 'x'.repeat(MAX_ELICITATION_ID_CHARS);
    const over = 'y'.repeat(MAX_ELICITATION_ID_CHARS + 1);
    urls.failed(session, auth, required(over, longest, over, 'e1'));
    expect(urls.size).toBe(2);
    expect(warned).toEqual([[{ upstream: 'auth', overlong: 2, limit: MAX_ELICITATION_ID_CHARS }, expect.stringContaining('over the length limit')]]);
    for (const id of [over, longest, 'e1']) urls.notification('auth', complete(id));
    expect(sent).toEqual([complete(longest), complete('e1')]);
    urls.failed(session, auth, required('e2'));
    expect(warned).toHaveLength(1);
  });

  it("counts no over-long id against the session's bound: with them mixed in, the first ones it may keep are all kept", () => {
    const urls = urlElicitations();
    const { session, sent } = host({ url: {} });
    const over = (i: number) => `${i}`.padEnd(MAX_ELICITATION_ID_CHARS + 1, 'y');
    // An over-long id before each of the ones the session may keep, and one more of each past them.
    const ids = Array.from({ length: URL_ELICITATIONS_PER_SESSION + 1 }, (_, i) => [over(i), `e${i}`]).flat();
    urls.failed(session, auth, required(...ids));
    expect(urls.size).toBe(URL_ELICITATIONS_PER_SESSION);
    const last = `e${URL_ELICITATIONS_PER_SESSION - 1}`;
    for (const id of [over(0), last, `e${URL_ELICITATIONS_PER_SESSION}`]) urls.notification('auth', complete(id));
    expect(sent).toEqual([complete(last)]);
  });

  it('lets a session\'s oldest go past its bound, and leaves other sessions\' alone', () => {
    const urls = urlElicitations();
    const busy = host({ url: {} });
    const other = host({ url: {} });
    urls.given(other.session, auth, 'o');
    for (let i = 0; i <= URL_ELICITATIONS_PER_SESSION; i++) urls.given(busy.session, auth, `b${i}`);
    expect(urls.size).toBe(URL_ELICITATIONS_PER_SESSION + 1);
    for (const id of ['b0', 'b1', 'o']) urls.notification('auth', complete(id));
    expect([busy.sent, other.sent]).toEqual([[complete('b1')], [complete('o')]]);
  });
});
