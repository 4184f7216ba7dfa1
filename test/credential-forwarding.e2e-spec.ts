import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startHttpFixture, type HttpFixture } from '@switchboard/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createKey } from './support/cli.js';
import { startDaemon, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';
import { expectNoCredentialIn, recordingProxy } from './support/recording-proxy.js';

afterAll(stopAllDaemons);

/**
 * The other upstream transports than auth.e2e-spec's shared Streamable HTTP one: a legacy
 * HTTP+SSE upstream (its GET stream and its POSTs) and a per-principal Streamable HTTP
 * upstream, whose connection is opened for the caller and so is the likeliest to be given
 * something of the caller's.
 */
describe('a downstream credential reaches no upstream transport', () => {
  const fixtures: HttpFixture[] = [];
  afterAll(async () => {
    for (const fixture of fixtures) await fixture.stop();
  });

  it('the key a host sends is in no header of any request to a legacy SSE upstream or a per-principal HTTP upstream', async () => {
    fixtures.push(await startHttpFixture('sse'), await startHttpFixture('http'));
    const [legacy, perPrincipal] = await Promise.all(fixtures.map((fixture) => recordingProxy(fixture.url)));
    const dir = tempDir();
    const configPath = writeConfig(
      {
        auth: { mode: 'required' }, policy: { defaultEffect: 'allow' },
        mcpServers: { legacy: { type: 'sse', url: legacy.url }, own: { type: 'http', url: perPrincipal.url, isolation: 'per-principal' } },
      },
      dir,
    );
    const key = createKey(configPath, 'dave');
    const daemon = await startDaemon(configPath);
    for (const headers of [{ Authorization: `Bearer ${key}` }, { 'X-API-Key': key }] as Record<string, string>[]) {
      const client = new Client({ name: 'e2e-no-forward', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers } }));
      for (const name of ['legacy__echo', 'own__echo']) {
        expect(await client.callTool({ name, arguments: { text: `via ${name}` } })).toMatchObject({ content: [{ type: 'text', text: `via ${name}` }] });
      }
      await client.close();
    }
    await daemon.stop();
    for (const proxy of [legacy, perPrincipal]) {
      proxy.server.close();
      // The legacy upstream saw its GET stream and POSTs; the per-principal one its POSTs.
      expect(proxy.seen.length).toBeGreaterThan(1);
      expectNoCredentialIn(proxy.seen, key);
    }
    // Its GET stream, the one request without a body.
    expect(legacy.seen.some((headers) => headers['content-type'] === undefined)).toBe(true);
  });
});
