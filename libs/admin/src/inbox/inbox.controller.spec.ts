import 'reflect-metadata';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AuthPrincipal, HttpAuthResult } from '@switchboard/auth';
import type { GatewayConfig } from '@switchboard/config';
import type { HttpRefusal } from '@switchboard/downstream';
import { Inbox, type InboxQuestion } from '@switchboard/inbox';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdminModule } from '../admin.module.js';
import type { AdminOptions } from '../admin-options.js';
import { parseInboxAnswer } from './inbox-answer.js';
import { streamInboxEvents } from './inbox-events.js';
import { INBOX_COOKIE, InboxSessions, SESSION_TTL_MS } from './inbox-sessions.js';

type Mode = 'none' | 'required';

const KEYS: Record<string, AuthPrincipal> = {
  'sbk_alice': { id: 'alice', authMethod: 'api-key', roles: ['dev'] },
  'sbk_bob': { id: 'bob', authMethod: 'api-key', roles: [] },
  'sbk_root': { id: 'root', authMethod: 'api-key', roles: ['admin'] },
};

const form = (principal: string | null, message = 'Who are you?'): InboxQuestion => ({
  kind: 'elicitation',
  mode: 'form',
  message,
  requestedSchema: { type: 'object', properties: { name: { type: 'string', minLength: 2 } }, required: ['name'] },
  server: 'fixture',
  principal,
  timeoutMs: 60_000,
});

/** The admin module as the daemon mounts it (no body parser), with a stand-in authenticator over KEYS. */
async function start(mode: Mode, withInbox = true) {
  const revoked = new Set<string>();
  const refusals: HttpRefusal[] = [];
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    security: { allowedHosts: [], allowedOrigins: [] },
    auth: { mode, authorizationServers: [] },
  } as unknown as GatewayConfig;
  const authenticate = async (req: IncomingMessage): Promise<HttpAuthResult> => {
    const header = req.headers.authorization;
    if (header === undefined) {
      return mode === 'none'
        ? { principal: { id: 'anonymous', authMethod: 'loopback', roles: [] } }
        : { refusal: { rule: 'auth:missing', reason: 'a credential is required' } };
    }
    const key = header.replace(/^Bearer /, '');
    if (revoked.has(key)) return { refusal: { rule: 'auth:revoked-key', reason: 'API key was revoked' } };
    const principal = KEYS[key];
    return principal ? { principal } : { refusal: { rule: 'auth:unknown-key', reason: 'unknown API key' } };
  };
  const inbox = new Inbox();
  const options: AdminOptions = { config: () => config, authenticate, onRefused: (r) => refusals.push(r), inbox: withInbox ? inbox : undefined };
  const moduleRef = await Test.createTestingModule({ imports: [AdminModule.register(options)] }).compile();
  const app = moduleRef.createNestApplication({ bodyParser: false, logger: false });
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as AddressInfo).port;
  apps.push(app);
  return { app, inbox, revoked, refusals, baseUrl: `http://127.0.0.1:${port}`, api: () => request(`http://127.0.0.1:${port}`) };
}

const apps: INestApplication[] = [];
const streams: IncomingMessage[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.destroy();
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Opens the SSE stream and collects its events. */
function openEvents(baseUrl: string, headers: Record<string, string>) {
  return new Promise<{ status: number; events: { event: string; data: any }[]; next(event: string): Promise<any> }>((resolve, reject) => {
    const req = httpRequest(`${baseUrl}/admin/inbox/events`, { headers }, (res) => {
      streams.push(res);
      const events: { event: string; data: any }[] = [];
      const waiters: (() => void)[] = [];
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
        }
        for (const w of waiters.splice(0)) w();
      });
      let seen = 0;
      const next = (event: string) =>
        new Promise<any>((done, fail) => {
          const timer = setTimeout(() => fail(new Error(`no '${event}' event; got ${JSON.stringify(events)}`)), 5000);
          const check = () => {
            const i = events.findIndex((e, index) => index >= seen && e.event === event);
            if (i === -1) return void waiters.push(check);
            seen = i + 1;
            clearTimeout(timer);
            done(events[i].data);
          };
          check();
        });
      resolve({ status: res.statusCode ?? 0, events, next });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /admin/inbox/items: who sees what', () => {
  it('shows a principal its own questions, an admin everyone’s, and nobody’s to a stranger', async () => {
    const { inbox, api } = await start('required');
    void inbox.ask(form('alice', 'for alice'));
    void inbox.ask(form('bob', 'for bob'));
    void inbox.ask(form(null, 'for nobody in particular'));

    const before = Date.now();
    const alice = await api().get('/admin/inbox/items').set(bearer('sbk_alice')).expect(200);
    const after = Date.now();
    expect(alice.headers['cache-control']).toBe('no-store');
    expect(alice.body.items.map((i: { message: string }) => i.message)).toEqual(['for alice']);
    expect(alice.body.viewer).toEqual({ principal: 'alice', admin: false });
    // The server's clock while it answered (the page counts expiries down from it).
    expect(alice.body.now).toBeGreaterThanOrEqual(before);
    expect(alice.body.now).toBeLessThanOrEqual(after);

    const root = await api().get('/admin/inbox/items').set(bearer('sbk_root')).expect(200);
    expect(root.body.items).toHaveLength(3);
    expect(root.body.viewer).toEqual({ principal: 'root', admin: true });

    await api().get('/admin/inbox/items').expect(401);
    await api().get('/admin/inbox/items').set(bearer('sbk_nobody')).expect(401);
    inbox.withdrawAll();
  });

  it('makes the local user an admin when auth is not required', async () => {
    const { inbox, api } = await start('none');
    void inbox.ask(form('alice'));
    void inbox.ask(form(null));
    const res = await api().get('/admin/inbox/items').expect(200);
    expect(res.body.viewer).toEqual({ principal: 'loopback:anonymous', admin: true });
    expect(res.body.items).toHaveLength(2);
    inbox.withdrawAll();
  });

  it('answers 404 on every inbox route when the daemon has no inbox', async () => {
    const { api } = await start('none', false);
    for (const path of ['/admin/inbox', '/admin/inbox/items', '/admin/inbox/app.js']) {
      const res = await api().get(path).expect(404);
      expect(res.body.error.message).toMatch(/inbox is not available/);
    }
  });
});

describe('POST /admin/inbox/items/:id/answer', () => {
  it('takes a valid answer once (204) and hands it to the asker with who answered', async () => {
    const { inbox, api } = await start('required');
    const outcome = inbox.ask(form('alice'));
    const [item] = inbox.visibleTo({ principal: 'alice', admin: false });
    await api()
      .post(`/admin/inbox/items/${item.id}/answer`)
      .set(bearer('sbk_alice'))
      .send({ action: 'accept', content: { name: 'Alice' } })
      .expect(204);
    await expect(outcome).resolves.toEqual({ action: 'accept', content: { name: 'Alice' }, answeredBy: 'alice' });
    const again = await api().post(`/admin/inbox/items/${item.id}/answer`).set(bearer('sbk_alice')).send({ action: 'decline' }).expect(404);
    expect(again.body.error.problems[0]).toMatch(/no such pending question/);
  });

  it('refuses, with the problems, an answer that does not fit the question or has the wrong shape', async () => {
    const { inbox, api } = await start('required');
    void inbox.ask(form('alice'));
    const [item] = inbox.visibleTo({ principal: 'alice', admin: false });
    const answer = (body: unknown, key = 'sbk_alice') => api().post(`/admin/inbox/items/${item.id}/answer`).set(bearer(key)).send(body as object);

    const tooShort = await answer({ action: 'accept', content: { name: 'A' } }).expect(400);
    expect(tooShort.body.error).toEqual({ message: 'the answer does not fit the question', problems: ['name must be at least 2 characters'] });
    expect((await answer({ action: 'approve' }).expect(400)).body.error.problems).toEqual(['action must be one of accept, decline, cancel']);
    expect((await answer({ action: 'shrug' }).expect(400)).body.error.problems[0]).toMatch(/^action must be one of/);
    expect((await answer({ action: 'decline', content: {} }).expect(400)).body.error.problems).toEqual(["content is not a field of a 'decline' answer"]);
    expect((await answer([1, 2]).expect(400)).body.error.problems).toEqual(['the body must be a JSON object']);
    // Someone else's question is as absent as an unknown one.
    await answer({ action: 'decline' }, 'sbk_bob').expect(404);
    await api().post('/admin/inbox/items/no-such-id/answer').set(bearer('sbk_root')).send({ action: 'decline' }).expect(404);
    expect(inbox.size).toBe(1);
    inbox.withdrawAll();
  });

  it('takes only application/json, so a cross-site form post cannot answer', async () => {
    const { inbox, api } = await start('none');
    void inbox.ask(form('alice'));
    const [item] = inbox.visibleTo({ principal: 'x', admin: true });
    const path = `/admin/inbox/items/${item.id}/answer`;
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
      const res = await api().post(path).set('Content-Type', type).send('action=decline').expect(415);
      expect(res.body.error.message).toMatch(/Content-Type: application\/json/);
    }
    await api().post(path).set('Content-Type', 'application/json').send('{"action":').expect(400);
    // A foreign Origin is stopped by the guard before any of this.
    await api().post(path).set('Origin', 'https://evil.example').send({ action: 'decline' }).expect(403);
    expect(inbox.size).toBe(1);
    await api().post(path).set('Content-Type', 'application/json; charset=utf-8').send('{"action":"decline"}').expect(204);
    expect(inbox.size).toBe(0);
  });
});

describe('the page and the browser login', () => {
  const cookieOf = (res: request.Response) => String(res.headers['set-cookie']?.[0] ?? '').split(';')[0];

  it('serves the page with a strict CSP, or the login form without a credential', async () => {
    const { api } = await start('required');
    const login = await api().get('/admin/inbox').expect(200);
    expect(login.text).toContain('data-view="login"');
    expect(login.headers['content-security-policy']).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    expect(login.headers['x-frame-options']).toBe('DENY');
    expect(login.headers['referrer-policy']).toBe('no-referrer');
    expect(login.text).not.toMatch(/<script>|<script [^>]*>[^<]/);

    const page = await api().get('/admin/inbox').set(bearer('sbk_bob')).expect(200);
    expect(page.text).toContain('data-view="inbox"');
    expect(page.text).toContain('<script type="module" src="/admin/inbox/app.js"></script>');
    for (const name of ['app.js', 'cards.js', 'form.js', 'dom.js']) {
      const script = await api().get(`/admin/inbox/${name}`).expect(200);
      expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
      // Upstream text goes in as text: no HTML parsing anywhere in the page's code.
      expect(script.text).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
    }
    expect((await api().get('/admin/inbox/app.js')).text).toContain('EventSource');
    const style = await api().get('/admin/inbox/app.css').expect(200);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('trades a key for an HttpOnly SameSite=Strict cookie, rechecks the key on each request, and signs out', async () => {
    const { inbox, api, revoked, refusals } = await start('required');
    void inbox.ask(form('alice'));

    const bad = await api().post('/admin/inbox/login').send({ token: 'sbk_wrong' }).expect(401);
    expect(bad.body.error.message).toMatch(/unknown API key/);
    expect(refusals.at(-1)).toMatchObject({ path: '/admin/inbox/login', decision: 'unauthenticated', rule: 'auth:unknown-key' });
    await api().post('/admin/inbox/login').send({ token: 'two words' }).expect(400);
    // What a Bearer header could not carry as one token is refused by the form itself, in its words.
    expect((await api().post('/admin/inbox/login').send({ token: '"sbk_alice"' }).expect(400)).body.error.message).toMatch(/without spaces or quotes/);
    await api().post('/admin/inbox/login').set('Content-Type', 'text/plain').send('{"token":"sbk_alice"}').expect(415);

    const ok = await api().post('/admin/inbox/login').send({ token: 'sbk_alice' }).expect(200);
    expect(ok.body.viewer).toEqual({ principal: 'alice', admin: false });
    const setCookie = String(ok.headers['set-cookie']);
    expect(setCookie).toMatch(/^switchboard_inbox=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/admin\/inbox; Max-Age=28800$/);
    const cookie = cookieOf(ok);

    expect((await api().get('/admin/inbox').set('Cookie', cookie).expect(200)).text).toContain('data-view="inbox"');
    const items = await api().get('/admin/inbox/items').set('Cookie', cookie).expect(200);
    expect(items.body).toMatchObject({ viewer: { principal: 'alice', admin: false }, session: true });
    expect(items.body.items).toHaveLength(1);

    // `keys revoke` ends the browser session on its next request.
    revoked.add('sbk_alice');
    const after = await api().get('/admin/inbox/items').set('Cookie', cookie).expect(401);
    expect(String(after.headers['set-cookie'])).toMatch(/^switchboard_inbox=; .*Max-Age=0/);
    expect(after.body.error.message).toBe('unauthorized: API key was revoked');
    expect(refusals.at(-1)).toMatchObject({ path: '/admin/inbox/items', decision: 'unauthenticated', rule: 'auth:revoked-key' });
    // The page itself then shows the sign-in form again.
    expect((await api().get('/admin/inbox').set('Cookie', cookie).expect(200)).text).toContain('data-view="login"');
    revoked.delete('sbk_alice');
    await api().get('/admin/inbox/items').set('Cookie', cookie).expect(401);

    const again = cookieOf(await api().post('/admin/inbox/login').send({ token: 'sbk_alice' }).expect(200));
    const out = await api().post('/admin/inbox/logout').set('Cookie', again).send({}).expect(204);
    expect(String(out.headers['set-cookie'])).toMatch(/Max-Age=0/);
    await api().get('/admin/inbox/items').set('Cookie', again).expect(401);
    inbox.withdrawAll();
  });

  it('treats /admin/inbox/ and other spellings Express routes the same as the inbox', async () => {
    const { api } = await start('required');
    expect((await api().get('/admin/inbox/').expect(200)).text).toContain('data-view="login"');
    const cookie = cookieOf(await api().post('/admin/inbox/login').send({ token: 'sbk_bob' }).expect(200));
    await api().get('/admin/Inbox/items').set('Cookie', cookie).expect(200);
    await api().get('/admin/inbox/items/').set('Cookie', cookie).expect(200);
  });

  it('accepts the cookie on /admin/inbox routes only, even an admin’s', async () => {
    const { api } = await start('required');
    const cookie = cookieOf(await api().post('/admin/inbox/login').send({ token: 'sbk_root' }).expect(200));
    await api().get('/admin/inbox/items').set('Cookie', cookie).expect(200);
    const audit = await api().get('/admin/api/audit').set('Cookie', cookie).expect(401);
    expect(audit.body.error.message).toMatch(/credential is required/);
    await api().get('/admin/inboxes').set('Cookie', cookie).expect(401);
  });
});

describe('InboxSessions', () => {
  it('forgets a session after 8 hours', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const sessions = new InboxSessions();
      const id = sessions.create('sbk_alice', 'alice');
      const req = { headers: { cookie: `other=1; ${INBOX_COOKIE}=${id}` } } as IncomingMessage;
      expect(sessions.tokenOf(req)).toEqual({ id, token: 'sbk_alice' });
      vi.setSystemTime(Date.now() + SESSION_TTL_MS - 1);
      expect(sessions.tokenOf(req)?.token).toBe('sbk_alice');
      vi.setSystemTime(Date.now() + 1);
      expect(sessions.tokenOf(req)).toBeUndefined();
      expect(sessions.size).toBe(0);
      expect(sessions.tokenOf({ headers: { cookie: `${INBOX_COOKIE}=short` } } as IncomingMessage)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('GET /admin/inbox/events', () => {
  it('sends a snapshot, then what is added and removed, filtered to the viewer', async () => {
    const { inbox, baseUrl, api } = await start('required');
    let listening = 0;
    const onChange = inbox.onChange.bind(inbox);
    vi.spyOn(inbox, 'onChange').mockImplementation((listener) => {
      listening++;
      const stop = onChange(listener);
      return () => (listening--, stop());
    });
    void inbox.ask(form('alice', 'before'));
    const alice = await openEvents(baseUrl, bearer('sbk_alice'));
    const bob = await openEvents(baseUrl, bearer('sbk_bob'));
    expect(alice.status).toBe(200);
    const snapshot = await alice.next('snapshot');
    expect(snapshot.items.map((i: { message: string }) => i.message)).toEqual(['before']);
    expect(snapshot.viewer).toEqual({ principal: 'alice', admin: false });
    expect((await bob.next('snapshot')).items).toEqual([]);

    void inbox.ask(form('alice', 'later'));
    const added = await alice.next('added');
    expect(added.item.message).toBe('later');
    expect(typeof added.now).toBe('number');
    await api().post(`/admin/inbox/items/${added.item.id}/answer`).set(bearer('sbk_alice')).send({ action: 'decline' }).expect(204);
    expect(await alice.next('removed')).toEqual({ id: added.item.id, outcome: 'decline' });
    inbox.withdrawAll();
    expect(await alice.next('removed')).toMatchObject({ outcome: 'withdrawn' });
    // Nothing of alice's reached bob's stream.
    expect(bob.events.map((e) => e.event)).toEqual(['snapshot']);

    const res = await openEvents(baseUrl, {});
    expect(res.status).toBe(401);
    expect(listening).toBe(2);
    for (const s of streams.splice(0)) s.destroy();
    await vi.waitFor(() => expect(listening).toBe(0));
  });

  it('stops listening when the stream closes, and ends it when the credential goes', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const inbox = new Inbox();
      const onChange = vi.spyOn(inbox, 'onChange');
      let admitted = true;
      const written: string[] = [];
      const listeners: (() => void)[] = [];
      const res = {
        writeHead: vi.fn(),
        write: (text: string) => written.push(text),
        end: vi.fn(() => listeners.forEach((l) => l())),
        once: (_: string, fn: () => void) => listeners.push(fn),
      } as unknown as ServerResponse;
      const onLapse = vi.fn();
      const lapse = async () => (admitted ? undefined : { rule: 'auth:revoked-key', reason: 'revoked' });
      streamInboxEvents(res, { inbox, viewer: { principal: 'alice', admin: false }, session: false, lapse, onLapse, heartbeatMs: 1000 });
      expect(onChange).toHaveBeenCalledOnce();
      await vi.advanceTimersByTimeAsync(1000);
      expect(written.at(-1)).toBe(': heartbeat\n\n');
      expect(res.end).not.toHaveBeenCalled();
      expect(onLapse).not.toHaveBeenCalled();
      admitted = false;
      await vi.advanceTimersByTimeAsync(1000);
      expect(res.end).toHaveBeenCalledOnce();
      expect(onLapse).toHaveBeenCalledExactlyOnceWith({ rule: 'auth:revoked-key', reason: 'revoked' });
      const before = written.length;
      void inbox.ask(form('alice'));
      expect(written.length).toBe(before);
      inbox.withdrawAll();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('parseInboxAnswer', () => {
  it('takes the four actions with their own fields only', () => {
    expect(parseInboxAnswer({ action: 'approve', rememberForMs: 900_000 })).toEqual({ ok: true, answer: { action: 'approve', rememberForMs: 900_000 } });
    expect(parseInboxAnswer({ action: 'accept' })).toEqual({ ok: true, answer: { action: 'accept' } });
    expect(parseInboxAnswer({ action: 'approve', rememberForMs: -1 })).toEqual({ ok: false, problems: ['rememberForMs must be a whole number of milliseconds'] });
    expect(parseInboxAnswer({ action: 'accept', content: 'yes' })).toEqual({ ok: false, problems: ['content must be an object'] });
    expect(parseInboxAnswer(null)).toEqual({ ok: false, problems: ['the body must be a JSON object'] });
  });
});
