import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, stdioFixture, stopAllDaemons, type DaemonHandle } from './support/daemon.js';

/**
 * A team puts the daemon behind a reverse proxy or a new name, and its hosts get 403: the
 * daemon's log must say which Host or Origin it refused and which setting admits it, whichever
 * endpoint refused it, with the audit log on or off. The 403 itself names no setting (any
 * client reads it), and a client that sends many names must not flood the log.
 */
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host-refusals', version: '1' } },
};

/** The daemon's JSON log lines that are warnings naming `setting` and `value`. */
function warnings(daemon: DaemonHandle, setting: string, value: string): string[] {
  return daemon
    .stderr()
    .split('\n')
    .filter((line) => line.includes(setting) && line.includes(`'${value}'`));
}

const warned = (daemon: DaemonHandle, setting: string, value: string) =>
  daemon.waitForLog((line) => line.includes(setting) && line.includes(`'${value}'`), 15_000, `a warning naming ${value} and ${setting}`);

describe('a refused Host or Origin is named in the log, with the setting that admits it', () => {
  let daemon: DaemonHandle;
  beforeAll(async () => {
    // The audit log off: the warning must not depend on it.
    daemon = await startDaemon({ mcpServers: { fx: stdioFixture() }, audit: { enabled: false } });
  });
  afterAll(stopAllDaemons);

  // One unlisted name per endpoint: each is warned of once, so each needs its own.
  const surfaces: [string, (host: string) => request.Test][] = [
    ['POST /mcp', (host) => request(daemon.baseUrl).post('/mcp').set('Host', host).set('Accept', 'application/json, text/event-stream').send(INIT)],
    ['GET /sse', (host) => request(daemon.baseUrl).get('/sse').set('Host', host).set('Accept', 'text/event-stream')],
    ['POST /messages', (host) => request(daemon.baseUrl).post('/messages?sessionId=x').set('Host', host).send(INIT)],
    ['GET /admin/api/audit', (host) => request(daemon.baseUrl).get('/admin/api/audit').set('Host', host)],
    ['GET /admin/inbox', (host) => request(daemon.baseUrl).get('/admin/inbox').set('Host', host)],
    ['GET /', (host) => request(daemon.baseUrl).get('/').set('Host', host)],
    ['GET /readyz', (host) => request(daemon.baseUrl).get('/readyz').set('Host', host)],
  ];

  it.each(surfaces.map(([name, send], i) => [name, send, `proxy-${i}.example:8780`] as const))(
    '%s: an unlisted Host is answered 403 (naming no setting) and logged with security.allowedHosts',
    async (_, send, host) => {
      const res = await send(host).expect(403);
      expect(res.text).not.toMatch(/allowedHosts|security\./);
      const line = await warned(daemon, 'security.allowedHosts', host);
      expect(JSON.parse(line)).toMatchObject({ level: 40, host, setting: 'security.allowedHosts' });
    },
  );

  it('an unlisted Origin is answered 403 and logged with security.allowedOrigins, on the MCP endpoint and a page', async () => {
    const mcp = await request(daemon.baseUrl)
      .post('/mcp')
      .set('Origin', 'https://tools.example.com')
      .set('Accept', 'application/json, text/event-stream')
      .send(INIT)
      .expect(403);
    expect(mcp.text).not.toMatch(/allowedOrigins|security\./);
    const line = await warned(daemon, 'security.allowedOrigins', 'https://tools.example.com');
    expect(JSON.parse(line)).toMatchObject({ level: 40, origin: 'https://tools.example.com', setting: 'security.allowedOrigins' });

    await request(daemon.baseUrl).get('/readyz').set('Origin', 'https://dashboard.example.com').expect(403);
    await warned(daemon, 'security.allowedOrigins', 'https://dashboard.example.com');
  });

  it('a Host that is no host name and port is refused without a warning to list it', async () => {
    await request(daemon.baseUrl).get('/readyz').set('Host', '127.0.0.1:80@evil.example').expect(403);
    await request(daemon.baseUrl).get('/readyz').set('Host', 'after-malformed.example').expect(403);
    // The log is written in order: once the later refusal's line is there, the earlier one's would be too.
    await warned(daemon, 'security.allowedHosts', 'after-malformed.example');
    expect(daemon.stderr()).not.toMatch(/evil\.example/);
  });
});

describe('each refused name is logged once an hour', () => {
  let daemon: DaemonHandle;
  beforeAll(async () => {
    // The audit log on (the default): the one listener feeds both.
    daemon = await startDaemon({ mcpServers: { fx: stdioFixture() } });
  });
  afterAll(stopAllDaemons);

  it('a second refusal of the same Host (on another endpoint) or Origin adds no line', async () => {
    await request(daemon.baseUrl).get('/readyz').set('Host', 'repeat.example').expect(403);
    await request(daemon.baseUrl).post('/mcp').set('Host', 'repeat.example').send(INIT).expect(403);
    await request(daemon.baseUrl).get('/').set('Origin', 'https://repeat.example').expect(403);
    await request(daemon.baseUrl).get('/').set('Origin', 'https://repeat.example').expect(403);
    await request(daemon.baseUrl).get('/').set('Host', 'later.example').expect(403);
    // Ordered log: the later name's line comes after any the repeats made.
    await warned(daemon, 'security.allowedHosts', 'later.example');
    expect(warnings(daemon, 'security.allowedHosts', 'repeat.example')).toHaveLength(1);
    expect(warnings(daemon, 'security.allowedOrigins', 'https://repeat.example')).toHaveLength(1);
  });
});
