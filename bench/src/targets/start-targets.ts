import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StdioMcpConnection } from '../load/stdio-load.js';
import { ManagedProcess } from './managed-process.js';
import { npmStartNodeFlags } from './npm-start-flags.js';
import { freePort, waitForPort } from './ports.js';
import { HttpTarget, StdioTarget, type Target, type TargetName } from './target.js';
import { discoverTools } from './tool-names.js';

/** bench/dist/targets/ -> the repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BENCH_UPSTREAM = join(REPO_ROOT, 'bench/dist/upstream/bench-upstream.js');
const SWITCHBOARD_BIN = join(REPO_ROOT, 'bin/switchboard.js');
const MCP_PROXY_BIN = join(REPO_ROOT, 'node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs');

const START_TIMEOUT_MS = 30_000;

/** Where started daemons get their config files and data dirs; removed by the caller at the end. */
export interface StartContext {
  workDir: string;
}

export interface UpstreamShape {
  /** BENCH_SERVER_NAME */
  name?: string;
  /** BENCH_EXTRA_TOOLS */
  extraTools?: number;
}

function upstreamEnv(shape: UpstreamShape): Record<string, string> {
  return { BENCH_SERVER_NAME: shape.name ?? 'bench', BENCH_EXTRA_TOOLS: String(shape.extraTools ?? 0) };
}

export interface StartedServer {
  process: ManagedProcess;
  url: string;
}

/** A bench upstream `--http` on an ephemeral port. */
export async function startHttpUpstream(label: string, shape: UpstreamShape = {}): Promise<StartedServer> {
  const managed = ManagedProcess.start(label, process.execPath, [BENCH_UPSTREAM, '--http'], {
    ...process.env,
    ...upstreamEnv(shape),
    PORT: '0',
  });
  const [, port] = await managed.waitForStdoutLine(/^LISTENING (\d+)$/, START_TIMEOUT_MS);
  return { process: managed, url: `http://127.0.0.1:${port}/mcp` };
}

/** A config entry running the bench upstream over stdio under a gateway. */
export function stdioUpstreamEntry(shape: UpstreamShape = {}): Record<string, unknown> {
  // The absolute node binary: a stdio upstream gets only its config env, maybe without PATH.
  return { command: process.execPath, args: [BENCH_UPSTREAM, '--stdio'], env: upstreamEnv(shape) };
}

/**
 * Top-level config keys merged over the bench's own (e.g. `audit`); none by default, so
 * the daemon runs with its defaults, as a user's would.
 */
export type ConfigOverrides = Record<string, unknown>;

/** The data dir of the daemon started under label (its audit database lives there). */
export function switchboardDataDir(label: string, context: StartContext): string {
  return join(context.workDir, label, 'data');
}

/** `switchboard start` as `npm start` runs it (same Node flags), with the given mcpServers, on an ephemeral port, logging warnings only. */
export async function startSwitchboard(
  label: string,
  context: StartContext,
  mcpServers: Record<string, Record<string, unknown>>,
  overrides: ConfigOverrides = {},
): Promise<StartedServer> {
  const dir = join(context.workDir, label);
  mkdirSync(dir, { recursive: true });
  const configPath = join(dir, 'switchboard.json');
  // JSON is YAML, so the daemon reads it as it would a hand-written switchboard.yaml.
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    dataDir: switchboardDataDir(label, context),
    log: { level: 'warn' },
    mcpServers,
    ...overrides,
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const managed = ManagedProcess.start(label, process.execPath, [
    ...npmStartNodeFlags(REPO_ROOT),
    SWITCHBOARD_BIN,
    'start',
    '--config',
    configPath,
    '--port',
    '0',
  ]);
  const [, url] = await managed.waitForStdoutLine(/^Switchboard listening on (http:\/\/\S+\/mcp)$/, START_TIMEOUT_MS);
  return { process: managed, url: url! };
}

/** mcp-proxy in front of a stdio bench upstream; it prints no port, so one is picked for it. */
export async function startMcpProxy(label: string): Promise<StartedServer> {
  const port = await freePort();
  const managed = ManagedProcess.start(label, process.execPath, [
    MCP_PROXY_BIN,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--server',
    'stream',
    '--',
    process.execPath,
    BENCH_UPSTREAM,
    '--stdio',
  ]);
  managed.discardStdout();
  await waitForPort(port, START_TIMEOUT_MS, () => managed.running);
  return { process: managed, url: `http://127.0.0.1:${port}/mcp` };
}

/** The label of a started target: its config dir under the work dir, and its name in messages. */
export function targetLabel(name: TargetName, labelSuffix = ''): string {
  return `${name}${labelSuffix}`;
}

/**
 * Starts one target and discovers its tool names. labelSuffix tells a second instance
 * of the same target apart (its own config dir and data dir); overrides reach the
 * config of a Switchboard target and are ignored by the others.
 */
export async function startTarget(
  name: TargetName,
  context: StartContext,
  labelSuffix = '',
  overrides: ConfigOverrides = {},
): Promise<Target> {
  const target = await launch(name, targetLabel(name, labelSuffix), context, overrides);
  try {
    const [caller] = await target.callers(1);
    target.tools = await discoverTools(caller!);
  } catch (error) {
    await target.stop();
    throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return target;
}

async function launch(name: TargetName, label: string, context: StartContext, overrides: ConfigOverrides): Promise<Target> {
  switch (name) {
    case 'direct-http': {
      const upstream = await startHttpUpstream(label);
      return new HttpTarget(name, upstream.url, [upstream.process], undefined);
    }
    case 'direct-stdio': {
      const managed = ManagedProcess.start(label, process.execPath, [BENCH_UPSTREAM, '--stdio'], {
        ...process.env,
        ...upstreamEnv({}),
      });
      const connection = new StdioMcpConnection(managed.child);
      await connection.open();
      return new StdioTarget(name, managed, connection);
    }
    case 'switchboard-stdio': {
      const daemon = await startSwitchboard(label, context, { bench: stdioUpstreamEntry() }, overrides);
      return new HttpTarget(name, daemon.url, [daemon.process], daemon.process.pid);
    }
    case 'switchboard-http': {
      const upstream = await startHttpUpstream(`${label}-upstream`);
      try {
        const daemon = await startSwitchboard(label, context, { bench: { type: 'http', url: upstream.url } }, overrides);
        return new HttpTarget(name, daemon.url, [daemon.process, upstream.process], daemon.process.pid);
      } catch (error) {
        await upstream.process.stop();
        throw error;
      }
    }
    case 'mcp-proxy': {
      const proxy = await startMcpProxy(label);
      return new HttpTarget(name, proxy.url, [proxy.process], proxy.process.pid);
    }
  }
}
