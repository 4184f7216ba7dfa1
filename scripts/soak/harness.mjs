// What the soak scenarios share (soak.mjs, churn.mjs): child processes they start and end, the
// daemon's heap probe (heap-probe.cjs), a pool of concurrent runs, and the CLI.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'switchboard.js');
export const HEAP_PROBE = join(ROOT, 'scripts/soak/heap-probe.cjs');
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const ISSUER = 'https://issuer.test';
export const mb = (bytes) => (bytes / 1048576).toFixed(2);

/** A temp dir for the run, removed with every child the run started when the script exits. */
export function soakRun() {
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

  /** Runs a node script and resolves with the first match of `ready` in its stdout (at once without one). */
  function startNode(args, env, ready, stdin = 'ignore') {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: [stdin, 'pipe', 'pipe'] });
    started.push(child);
    let out = '';
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    if (!ready) return Promise.resolve({ child, stderr: () => err });
    return new Promise((resolve, reject) => {
      const seen = (c) => {
        out += c;
        const m = ready.exec(out);
        if (!m) return;
        child.stdout.off('data', seen);
        resolve({ child, match: m, stderr: () => err });
      };
      child.stdout.on('data', seen);
      child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before it was ready:\n${err}`)));
    });
  }

  /** Full GCs in the daemon (started with --expose-gc -r heap-probe.cjs), then its heap and handles. */
  async function probe(daemon, file) {
    rmSync(file, { force: true });
    daemon.kill('SIGUSR2');
    while (!existsSync(file)) await sleep(100);
    await sleep(100);
    return JSON.parse(readFileSync(file, 'utf8'));
  }

  /** What every soak config has: loopback on an ephemeral port, the data dir in `dir`, errors only. */
  const baseConfig = () => ({ listen: { host: '127.0.0.1', port: 0 }, dataDir: join(dir, 'data'), log: { level: 'error' } });

  return { dir, startNode, probe, baseConfig, cleanUp };
}

/** `switchboard <args>`; its last line of output, or a throw with its stderr. */
export function cli(args) {
  const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`switchboard ${args.join(' ')}: ${run.stderr}`);
  return run.stdout.trim().split('\n').at(-1);
}

/** Runs run(0..count-1), `width` at a time; a run that throws is counted as done. */
export async function inPool(count, width, run) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await run(next++).catch(() => undefined);
    }),
  );
}

/** A JWKS server and tokens of its key for `sub` (issuer ISSUER, audience switchboard). */
export async function jwksIssuer() {
  const jose = await import(createRequire(join(ROOT, 'package.json')).resolve('jose'));
  const pair = await jose.generateKeyPair('ES256');
  const key = { ...(await jose.exportJWK(pair.publicKey)), kid: 'soak', use: 'sig', alg: 'ES256' };
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key] })));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const token = (sub) =>
    new jose.SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'soak' }).setIssuer(ISSUER).setAudience('switchboard').setSubject(sub).setIssuedAt().setExpirationTime('15m').sign(pair.privateKey);
  return { url: `http://127.0.0.1:${server.address().port}/jwks.json`, token, close: () => server.close() };
}
