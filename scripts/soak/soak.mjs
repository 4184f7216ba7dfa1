// Session churn against the real daemon, to find state that outlives its owner (docs/performance.md,
// "Soak: state under session churn"). Needs a build (npm run build).
//
//   node scripts/soak/soak.mjs [--rounds 5] [--sessions 300] [--jwt]
//
// Starts an upstream shared by every session (the stdio fixture) and one each session gets its
// own connection to (the Streamable HTTP fixture, isolation: per-session), and the daemon with
// --expose-gc and heap-probe.cjs. Each round opens --sessions Streamable HTTP sessions and a
// quarter as many /sse ones (sessions.mjs), eight at a time, as four API keys, no credential,
// or an unknown key, or with --jwt as a new token subject each; waits for the idle sweep
// (sessionIdleMs 2 s) and the relayed questions' timeouts; then reads the heap after full GCs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BIN, HEAP_PROBE, ISSUER, ROOT, cli, inPool, jwksIssuer, mb, sleep, soakRun } from './harness.mjs';
import { sessionDriver } from './sessions.mjs';

const { values: options } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, sessions: { type: 'string', default: '300' }, jwt: { type: 'boolean', default: false } },
});
const ROUNDS = Number(options.rounds);
const SESSIONS = Number(options.sessions);
/** Longer than sessionIdleMs and its sweep, and than the fixture's 2 s slow calls. */
const SETTLE_MS = 8000;
const { dir, startNode, probe: probeOf, baseConfig, cleanUp } = soakRun();

const own = await startNode([join(ROOT, 'libs/testing/dist/fixtures/http-server.js')], { PORT: '0' }, /LISTENING (\d+)/);
const issuer = options.jwt ? await jwksIssuer() : undefined;
const configPath = join(dir, 'switchboard.json');
writeFileSync(
  configPath,
  JSON.stringify({
    ...baseConfig(),
    ...(issuer && { auth: { mode: 'none', jwt: { issuer: ISSUER, audience: 'switchboard', jwksUrl: issuer.url } } }),
    timeouts: { sessionIdleMs: 2000, requestMs: 4000 },
    rateLimits: { perPrincipalTool: { points: 50, durationSec: 1 } },
    mcpServers: {
      shared: { command: process.execPath, args: [join(ROOT, 'libs/testing/dist/fixtures/stdio-server.js')] },
      own: { url: `http://127.0.0.1:${own.match[1]}/mcp`, isolation: 'per-session' },
    },
  }),
);
const keys = ['alice', 'bob', 'carol', 'dave'].map((name) => cli(['keys', 'create', '--config', configPath, '--name', name]));
const probeOut = join(dir, 'probe.json');
const daemon = await startNode(['--expose-gc', '-r', HEAP_PROBE, BIN, 'start', '--config', configPath], { SOAK_PROBE_OUT: probeOut }, /listening on (http:\/\/\S+)\/mcp/);
const base = daemon.match[1];

/** Every tenth an unknown key (refused), every tenth none (loopback), the rest a key or a new token subject. */
const credentialFor = async (i) => {
  if (i % 10 === 9) return { 'x-api-key': `sbk_${'x'.repeat(43)}` };
  if (i % 10 === 8) return {};
  return issuer ? { authorization: `Bearer ${await issuer.token(`user-${i}`)}` } : { 'x-api-key': keys[i % keys.length] };
};
const driver = sessionDriver(base, { credentialFor });

const probe = () => probeOf(daemon.child, probeOut);

const first = await probe();
console.log(`round 0: heap ${mb(first.heapUsed)} MiB after GC, rss ${mb(first.rss)} MiB, handles ${JSON.stringify(first.handles)}, objects ${JSON.stringify(first.objects)}`);
for (let round = 1, offset = 0; round <= ROUNDS; round++, offset += SESSIONS) {
  const t0 = Date.now();
  await inPool(SESSIONS, 8, (i) => driver.streamableHttp(offset + i));
  await inPool(Math.floor(SESSIONS / 4), 4, (i) => driver.legacySse(offset + i));
  const took = Date.now() - t0;
  await sleep(SETTLE_MS);
  const p = await probe();
  console.log(`round ${round}: heap ${mb(p.heapUsed)} MiB after GC, rss ${mb(p.rss)} MiB, handles ${JSON.stringify(p.handles)}, objects ${JSON.stringify(p.objects)}, ${took} ms; so far ${JSON.stringify(driver.counts)}`);
}

// What the upstreams still hold: no subscription, and only the catalog's and this session's connections to `own`.
const init = await driver.post('/mcp', await credentialFor(0), driver.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'soak-stats', version: '1' } }));
const h = { ...(await credentialFor(0)), 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
await driver.post('/mcp', h, { jsonrpc: '2.0', method: 'notifications/initialized' });
for (const server of ['shared', 'own']) {
  const answer = await driver.post('/mcp', h, driver.request('tools/call', { name: `${server}__stats`, arguments: {} }));
  const stats = JSON.parse(JSON.parse(answer.text.replace(/^[^{]*/, '').split('\n')[0]).result.content[0].text);
  console.log(`${server} upstream: sessions ${stats.sessions ?? '-'}, subscriptions held ${stats.subscriptions.length}, subscribes ${stats.subscribes}, unsubscribes ${stats.unsubscribes}`);
}
driver.close();
issuer?.close();
cleanUp();
