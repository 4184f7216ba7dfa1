import { fileURLToPath } from 'node:url';
import { startHttpFixture, TEST_CERT_PATH, type HttpFixture } from '@switchboard/testing';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startDaemon, stopAllDaemons } from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';

/**
 * Remote MCP servers are mostly HTTPS. The gateway's Streamable HTTP client must speak TLS and
 * verify the server's certificate against the trusted CAs (here the test CA, added the way an
 * operator adds an internal one: NODE_EXTRA_CA_CERTS), and refuse an untrusted one.
 */
let fixture: HttpFixture;
const hosts: Host[] = [];

beforeAll(async () => {
  fixture = await startHttpFixture('http', { FIXTURE_TLS: '1' });
});
afterAll(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await stopAllDaemons();
  await fixture?.stop();
});

describe('an upstream over HTTPS', () => {
  it('is reached and relayed when its certificate is trusted', async () => {
    expect(fixture.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const daemon = await startDaemon({ mcpServers: { fx: { type: 'http', url: fixture.url } } }, [], {
      NODE_EXTRA_CA_CERTS: fileURLToPath(TEST_CERT_PATH),
    });
    const host = await connectHost('streamable-http', { daemon });
    hosts.push(host);
    const result = await host.client.callTool({ name: 'fx__echo', arguments: { text: 'over TLS ✓' } });
    expect((result.content as { text: string }[])[0].text).toBe('over TLS ✓');
    // Progress needs the POST's event stream: it too arrives over TLS.
    const progress: number[] = [];
    await host.client.callTool({ name: 'fx__slow', arguments: { ms: 100, steps: 2 } }, { onprogress: (p) => void progress.push(p.progress) });
    expect(progress.length).toBeGreaterThanOrEqual(1);
  });

  it('is refused, and reported with the reason, when its certificate is not trusted', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: { type: 'http', url: fixture.url } } });
    const status = await eventually(async () => {
      const res = await request(daemon.baseUrl).get('/readyz');
      const upstream = (res.body as { upstreams: { state: string; lastError?: string }[] }).upstreams[0]!;
      return upstream.state === 'down' && upstream.lastError ? { code: res.status, upstream } : undefined;
    });
    expect(status.code).toBe(503);
    expect(status.upstream.lastError).toMatch(/certificate/i);
  });
});
