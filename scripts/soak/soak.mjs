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
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sessionDriver } from './sessions.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'switchboard.js');
const { values: options } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, sessions: { type: 'string', default: '300' }, jwt: { type: 'boolean', default: false } },
});
const ROUNDS = Number(options.rounds);
const SESSIONS = Number(options.sessions);
/** Longer than sessionIdleMs and its sweep, and than the fixture's 2 s slow calls. */
const SETTLE_MS = 8000;
const ISSUER = 'https://issuer.test';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'sb-soak-'));
const started = [];
const cleanUp = () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGTERM');
  // The config and the daemon's data dir (its audit database): a daemon still exiting cannot
  // recreate them once the directory is gone.
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', cleanUp);
process.on('SIGINT', () => process.exit(130));

/** Runs a node script and resolves with the first line of its stdout matching `ready`. */
function startNode(args, env, ready) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      const m = ready.exec(out);
      if (m) resolve({ child, match: m });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before it was ready:\n${err}`)));
  });
}

async function jwksIssuer() {
  const jose = await import(createRequire(join(ROOT, 'package.json')).resolve('jose'));
  const pair = await jose.generateKeyPair('ES256');
  const key = { ...(await jose.exportJWK(pair.publicKey)), kid: 'soak', use: 'sig', alg: 'ES256' };
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key] })));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const token = (sub) =>
    new jose.SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'soak' }).setIssuer(ISSUER).setAudience('switchboard').setSubject(sub).setIssuedAt().setExpirationTime('15m').sign(pair.privateKey);
  return { url: `http://127.0.0.1:${server.address().port}/jwks.json`, token, close: () => server.close() };
}

const own = await startNode([join(ROOT, 'libs/testing/dist/fixtures/http-server.js')], { PORT: '0' }, /LISTENING (\d+)/);
const issuer = options.jwt ? await jwksIssuer() : undefined;
const configPath = join(dir, 'switchboard.json');
writeFileSync(
  configPath,
  JSON.stringify({
    listen: { host: '127.0.0.1', port: 0 },
    dataDir: join(dir, 'data'),
    log: { level: 'error' },
    ...(issuer && { auth: { mode: 'none', jwt: { issuer: ISSUER, audience: 'switchboard', jwksUrl: issuer.url } } }),
    timeouts: { sessionIdleMs: 2000, requestMs: 4000 },
    rateLimits: { perPrincipalTool: { points: 50, durationSec: 1 } },
    mcpServers: {
      shared: { command: process.execPath, args: [join(ROOT, 'libs/testing/dist/fixtures/stdio-server.js')] },
      own: { url: `http://127.0.0.1:${own.match[1]}/mcp`, isolation: 'per-session' },
    },
  }),
);
const keys = ['alice', 'bob', 'carol', 'dave'].map((name) => {
  const made = spawnSync(process.execPath, [BIN, 'keys', 'create', '--config', configPath, '--name', name], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(made.stderr);
  return made.stdout.trim().split('\n').at(-1);
});
const probeOut = join(dir, 'probe.json');
const daemon = await startNode(['--expose-gc', '-r', join(ROOT, 'scripts/soak/heap-probe.cjs'), BIN, 'start', '--config', configPath], { SOAK_PROBE_OUT: probeOut }, /listening on (http:\/\/\S+)\/mcp/);
const base = daemon.match[1];

/** Every tenth an unknown key (refused), every tenth none (loopback), the rest a key or a new token subject. */
const credentialFor = async (i) => {
  if (i % 10 === 9) return { 'x-api-key': `sbk_${'x'.repeat(43)}` };
  if (i % 10 === 8) return {};
  return issuer ? { authorization: `Bearer ${await issuer.token(`user-${i}`)}` } : { 'x-api-key': keys[i % keys.length] };
};
const driver = sessionDriver(base, { credentialFor });

async function probe() {
  rmSync(probeOut, { force: true });
  daemon.child.kill('SIGUSR2');
  while (!existsSync(probeOut)) await sleep(100);
  await sleep(100);
  return JSON.parse(readFileSync(probeOut, 'utf8'));
}

async function inPool(count, width, run) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < count) await run(next++).catch(() => undefined);
  }));
}

const mb = (bytes) => (bytes / 1048576).toFixed(2);
const first = await probe();
console.log(`round 0: heap ${mb(first.heapUsed)} MiB after GC, rss ${mb(first.rss)} MiB, handles ${JSON.stringify(first.handles)}`);
for (let round = 1, offset = 0; round <= ROUNDS; round++, offset += SESSIONS) {
  const t0 = Date.now();
  await inPool(SESSIONS, 8, (i) => driver.streamableHttp(offset + i));
  await inPool(Math.floor(SESSIONS / 4), 4, (i) => driver.legacySse(offset + i));
  const took = Date.now() - t0;
  await sleep(SETTLE_MS);
  const p = await probe();
  console.log(`round ${round}: heap ${mb(p.heapUsed)} MiB after GC, rss ${mb(p.rss)} MiB, handles ${JSON.stringify(p.handles)}, ${took} ms; so far ${JSON.stringify(driver.counts)}`);
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
