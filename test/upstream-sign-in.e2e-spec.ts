import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startDaemon, stopAllDaemons } from './support/daemon.js';

/**
 * README, "Upstream sign-in": a remote server that wants the OAuth sign-in hosts do in a
 * browser is left down with its 401 and advice on what to configure instead. The advice
 * quotes config syntax (`Bearer ${env:NAME}`, `${secret:NAME}`) that the redaction rules
 * take for secrets; it is the gateway's own text and must reach /readyz and the log whole.
 */
const servers: Server[] = [];
afterEach(async () => {
  await stopAllDaemons();
  for (const server of servers.splice(0)) server.close();
});

/** A server that answers every request 401 with a Bearer challenge and `body`. */
async function signInServer(body: string): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(401, { 'WWW-Authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('an HTTP upstream that wants an OAuth sign-in', () => {
  it('is down with its 401 and the advice, whole, while what the upstream sent is still redacted', async () => {
    const token = 'tok-0123456789abcdef';
    const url = await signInServer(`{"error":"invalid_token","detail":"${token} has expired"}`);
    const daemon = await startDaemon({ mcpServers: { remote: { url, headers: { Authorization: `Bearer ${token}` } } } });
    const lastError = await eventually(async () => {
      const { upstreams } = (await request(daemon.baseUrl).get('/readyz')).body as { upstreams: { lastError?: string }[] };
      return upstreams[0]?.lastError;
    }, 15_000, 'the connect to fail');
    expect(lastError).toBe(
      'upstream answered HTTP 401 Unauthorized: {"error":"invalid_token","detail":"[REDACTED:upstream-credential] has expired"}; the server wants a ' +
        'bearer token, which hosts get by an OAuth sign-in that Switchboard does not do for its upstreams: give a valid token in ' +
        'headers (Authorization: "Bearer ${env:NAME}"), or ${secret:NAME} with isolation: per-principal',
    );
  });
});
