import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { connectHost } from './support/hosts.js';
import { eventually, startDaemon, stopAllDaemons, writeConfig } from './support/daemon.js';

const WITHOUT_TEMPLATES = fileURLToPath(new URL('./fixtures/upstream-without-templates.mjs', import.meta.url));

afterAll(stopAllDaemons);

describe('an upstream that declares resources but does not answer resources/templates/list', () => {
  it('is ready, serves its resources and lists no templates: -32601 there is no fault', async () => {
    const daemon = await startDaemon(writeConfig({ mcpServers: { notes: { command: process.execPath, args: [WITHOUT_TEMPLATES] } }, log: { level: 'info' } }));
    const host = await connectHost('streamable-http', { daemon });
    try {
      await eventually(async () => (await host.client.listResources()).resources.length === 1, 15_000, 'its resources listed');
      expect((await host.client.listResources()).resources.map((r) => r.uri)).toEqual(['notes://readme']);
      expect((await host.client.listResourceTemplates()).resourceTemplates).toEqual([]);
      const ready = await request(daemon.baseUrl).get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.upstreams).toEqual([expect.objectContaining({ name: 'notes', state: 'ready' })]);
      // Never degraded for it, nor warned of as a list that could not be read.
      await daemon.waitForLog(/"state":"ready".*"msg":"upstream state"/, 10_000, 'the upstream ready');
      expect(daemon.stderr()).not.toMatch(/could not read upstream list/);
      expect(daemon.stderr()).not.toMatch(/"state":"degraded"/);
    } finally {
      await host.close();
    }
  });
});
