import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, stdioFixture, stopAllDaemons, type DaemonHandle } from './support/daemon.js';

/**
 * The daemon's address opened in a browser, as a new user does after the quick start: it
 * says where the MCP endpoints are, and no more than /healthz does.
 */
let daemon: DaemonHandle;

beforeAll(async () => {
  daemon = await startDaemon({ mcpServers: { fx: stdioFixture() } });
});
afterAll(stopAllDaemons);

describe('GET /', () => {
  it("says it is Switchboard's MCP endpoint and where /mcp, /sse, /readyz and the inbox are", async () => {
    const res = await request(daemon.baseUrl).get('/').expect(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.text).toMatch(/^Switchboard: an MCP gateway\./);
    expect(res.text).toMatch(/^ {2}\/mcp +Streamable HTTP/m);
    expect(res.text).toMatch(/^ {2}\/sse +HTTP\+SSE, the legacy transport/m);
    expect(res.text).toMatch(/^ {2}\/readyz /m);
    expect(res.text).toMatch(/^ {2}\/admin\/inbox /m);
    // Nothing about this daemon: no upstream, no version, not the Host it was asked under.
    expect(res.text).not.toMatch(/fx|\d+\.\d+\.\d+|127\.0\.0\.1/);
  });

  it('is under the Host and Origin checks of the MCP endpoints and /readyz', async () => {
    const badHost = await request(daemon.baseUrl).get('/').set('Host', 'evil.example').expect(403);
    expect(badHost.text).not.toMatch(/\/mcp/);
    await request(daemon.baseUrl).get('/').set('Origin', 'https://evil.example').expect(403);
    await request(daemon.baseUrl).get('/').set('Origin', 'http://localhost:6274').expect(200);
  });
});
