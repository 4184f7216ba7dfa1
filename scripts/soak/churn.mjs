// The soak's second scenario (docs/performance.md, "Soak: state under session churn"): what
// soak.mjs does not churn. Needs a build (npm run build).
//
//   node scripts/soak/churn.mjs [--rounds 5] [--sessions 120]            # Streamable HTTP sessions
//   node scripts/soak/churn.mjs [--rounds 5] [--sessions 120] --stdio    # one `switchboard stdio` process
//
// Upstreams: the task fixture (test/fixtures/task-upstream.mjs, every tool a task) and the
// stdio fixture, whose `add` a `confirm` rule holds for approval. Each round makes eight new
// API keys and revokes them at its end; an HTTP session is one of them, a new token subject or
// the loopback user, a third each. A session (HTTP) or an iteration (stdio) runs a task
// and gets, lists, fetches, cancels or leaves it, and makes a call that waits for approval,
// approved (remembered or not), declined or withdrawn; halfway through each round the config
// and the policy file are rewritten (a server of a new name added, or removed, a rate limit
// and a rule changed), so the daemon reloads with calls, tasks and approvals live
// (`switchboard stdio` reads its config once: there only the policy file is reloaded).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BIN, HEAP_PROBE, ISSUER, ROOT, cli, inPool, jwksIssuer, mb, sleep, soakRun } from './harness.mjs';
import { httpHost } from './churn-http.mjs';
import { stdioHost } from './churn-stdio.mjs';

const { values: options } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, sessions: { type: 'string', default: '120' }, stdio: { type: 'boolean', default: false } },
});
const ROUNDS = Number(options.rounds);
const SESSIONS = Number(options.sessions);
/** Past sessionIdleMs and its sweep, the reload, and the approvals' timeoutMs. */
const SETTLE_MS = 8000;
const { dir, startNode, probe, baseConfig, cleanUp } = soakRun();

const issuer = await jwksIssuer();
const configPath = join(dir, 'switchboard.json');
const policyPath = join(dir, 'policy.yaml');
const fixture = (file) => ({ command: process.execPath, args: [join(ROOT, file)] });
/** The config and policy of reload `n`: odd ones add a server of a new name (`spare<n>`), every one changes the policy digest. */
function writeConfig(n) {
  writeFileSync(
    policyPath,
    `defaultEffect: allow\neveryone: [all]\nroles:\n  all:\n    - { id: ask-add, confirm: call, tool: "shared__add" }\n    - { id: no-${n}, deny: call, tool: "shared__nothing_${n}" }\n`,
  );
  writeFileSync(
    configPath,
    JSON.stringify({
      ...baseConfig(),
      auth: { mode: 'none', jwt: { issuer: ISSUER, audience: 'switchboard', jwksUrl: issuer.url } },
      policy: { file: policyPath },
      timeouts: { sessionIdleMs: 2000, requestMs: 4000 },
      approvals: { timeoutMs: 3000, rememberMs: [60_000] },
      rateLimits: { perPrincipalTool: { points: 50 + (n % 2), durationSec: 1 } },
      mcpServers: {
        jobs: fixture('test/fixtures/task-upstream.mjs'),
        shared: fixture('libs/testing/dist/fixtures/stdio-server.js'),
        ...(n % 2 && { [`spare${n}`]: fixture('libs/testing/dist/fixtures/stdio-server.js') }),
      },
    }),
  );
}
writeConfig(0);

const probeOut = join(dir, 'probe.json');
const node = ['--expose-gc', '-r', HEAP_PROBE, BIN];
const host = options.stdio
  ? await stdioHost(await startNode([...node, 'stdio', '--config', configPath], { SOAK_PROBE_OUT: probeOut }, undefined, 'pipe'))
  : httpHost(await startNode([...node, 'start', '--config', configPath], { SOAK_PROBE_OUT: probeOut }, /listening on (http:\/\/\S+)\/mcp/));

const first = await probe(host.daemon, probeOut);
console.log(`round 0: heap ${mb(first.heapUsed)} MiB after GC, rss ${mb(first.rss)} MiB, handles ${JSON.stringify(first.handles)}, objects ${JSON.stringify(first.objects)}`);
let reloads = 0;
for (let round = 1, offset = 0; round <= ROUNDS; round++, offset += SESSIONS) {
  const t0 = Date.now();
  const names = Array.from({ length: 8 }, (_, k) => `r${round}-k${k}`);
  const keys = names.map((name) => cli(['keys', 'create', '--config', configPath, '--name', name]));
  // A new key, a new token subject, or no credential (the loopback user).
  const credentialFor = async (i) =>
    i % 3 === 0 ? { authorization: `Bearer ${keys[i % keys.length]}` } : i % 3 === 1 ? { authorization: `Bearer ${await issuer.token(`r${round}-u${i}`)}` } : {};
  await inPool(SESSIONS, host.width, async (i) => {
    if (i === Math.floor(SESSIONS / 2)) writeConfig(++reloads);
    await host.session(offset + i, await credentialFor(i));
  });
  for (const name of names) cli(['keys', 'revoke', '--config', configPath, name]);
  const took = Date.now() - t0;
  await sleep(SETTLE_MS);
  const p = await probe(host.daemon, probeOut);
  console.log(`round ${round}: heap ${mb(p.heapUsed)} MiB after GC, rss ${mb(p.rss)} MiB, handles ${JSON.stringify(p.handles)}, objects ${JSON.stringify(p.objects)}, ${took} ms; so far ${JSON.stringify(host.counts)}`);
}
host.close();
issuer.close();
cleanUp();
