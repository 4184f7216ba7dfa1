import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { SWITCHBOARD_BIN, eventually, stdioFixture, writeConfig } from './daemon.js';

/**
 * A raw host of `switchboard stdio`: it writes newline-delimited JSON to the gateway's stdin
 * and reads every line of its stdout, byte by byte, without the SDK in between.
 */
export type Line = Record<string, unknown> | Record<string, unknown>[];

export interface RawHost {
  proc: ChildProcessWithoutNullStreams;
  /** Every stdout line so far, parsed, in order. */
  lines: Line[];
  send(value: unknown): void;
  /** Resolves with the first line (from index `from`) that `match` accepts. */
  next(match: (line: Line) => boolean, from?: number): Promise<Line>;
  exited: Promise<number | null>;
  /** Everything on stderr so far (the gateway's log). */
  stderr(): string;
  /** Lines on stdout that were not JSON: stdout must carry nothing but messages. */
  stray: string[];
  /** Where its audit log is. */
  dataDir: string;
}

const hosts: RawHost[] = [];

/** Starts `switchboard stdio` with `fx` as its one upstream (and `settings` in its config); nothing is sent yet. */
export function spawnHost(fx: unknown, settings: Record<string, unknown> = {}): RawHost {
  const configPath = writeConfig({ mcpServers: { fx }, ...settings });
  const proc = spawn(process.execPath, [SWITCHBOARD_BIN, 'stdio', '--config', configPath], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Line[] = [];
  const stray: string[] = [];
  let pending = '';
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (chunk: string) => {
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        lines.push(JSON.parse(line) as Line);
      } catch {
        stray.push(line);
      }
    }
  });
  let stderr = '';
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (chunk: string) => (stderr += chunk));
  // 'close', not 'exit': at 'exit' the last of its stdout and stderr may still be unread.
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
  const host: RawHost = {
    proc,
    lines,
    exited,
    stderr: () => stderr,
    stray,
    // writeConfig's own data dir, unless the settings name one (a second start on a first one's log).
    dataDir: typeof settings.dataDir === 'string' ? settings.dataDir : join(dirname(configPath), 'data'),
    send: (value) => proc.stdin.write(`${JSON.stringify(value)}\n`),
    next: (match, from = 0) => eventually(() => lines.slice(from).find(match), 15_000, 'a matching stdout line'),
  };
  hosts.push(host);
  return host;
}

/** For afterEach: ends every host a test started, and waits until each has closed. */
export async function stopAllHosts(): Promise<void> {
  for (const host of hosts.splice(0)) {
    host.proc.kill('SIGTERM');
    await host.exited;
  }
}

export const initialize = (id: string | number, protocolVersion: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** A host through initialize at `protocolVersion`, once the upstream's tools (fx__slow among them) are in the catalog. */
export async function launch(protocolVersion: string, fx: unknown = stdioFixture(), settings: Record<string, unknown> = {}): Promise<RawHost> {
  const host = spawnHost(fx, settings);
  host.send(initialize(0, protocolVersion));
  await host.next((l) => !Array.isArray(l) && l.id === 0);
  host.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // The upstream's tools are in the catalog before the tests call them.
  host.send({ jsonrpc: '2.0', id: 'tools', method: 'tools/list' });
  const listed = (await host.next((l) => !Array.isArray(l) && l.id === 'tools')) as { result: { tools: { name: string }[] } };
  expect(listed.result.tools.map((t) => t.name)).toContain('fx__slow');
  return host;
}
