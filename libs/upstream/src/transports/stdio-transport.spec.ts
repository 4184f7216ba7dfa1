import type { JsonRpcMessage } from '@switchboard/core';
import type { StdioServerConfig } from '@switchboard/config';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_MESSAGE_CHARS } from './message-limit.js';
import { MAX_STDERR_LINE_CHARS, StdioUpstreamTransport } from './stdio-transport.js';

interface Entry {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const transports: StdioUpstreamTransport[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
});

/** A transport running `node -e script`, with a logger that keeps what it is given. */
async function start(
  script: string,
  env: Record<string, string> = {},
  gatewayEnv: Record<string, string> = {},
  redactText?: (text: string) => string,
) {
  const raw: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void raw.push(line) });
  const config = { name: 'up', transport: 'stdio', command: process.execPath, args: ['-e', script], env } as unknown as StdioServerConfig;
  const transport = new StdioUpstreamTransport(config, logger, gatewayEnv, redactText);
  transports.push(transport);
  const messages: JsonRpcMessage[] = [];
  let closes = 0;
  transport.onmessage = (m) => void messages.push(m);
  transport.onclose = () => void closes++;
  await transport.start();
  return { transport, messages, raw, entries: () => raw.map((l) => JSON.parse(l) as Entry), closes: () => closes };
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('StdioUpstreamTransport', () => {
  it('closes the connection when stdout carries a line over the size limit, logging its size but not its content', async () => {
    // A line that never ends, written as fast as the pipe takes it.
    const flood = `const c = 'x'.repeat(1 << 20);
      const pump = () => { while (process.stdout.write(c)); process.stdout.once('drain', pump); };
      pump();`;
    const { transport, raw, entries, closes } = await start(flood);
    const pid = transport.pid!;
    await until(() => closes() === 1);
    expect(transport.closeReason()).toMatch(/over the limit of \d+ characters/);
    const error = entries().find((e) => e.level === 50)!;
    expect(error.msg).toMatch(/over the size limit/);
    expect(error.chars).toBeGreaterThan(MAX_MESSAGE_CHARS);
    expect(raw.some((l) => l.includes('xxxxxxxx'))).toBe(false);
    // The child is stopped, and its exit is no surprise worth a warning.
    await transport.close();
    expect(isAlive(pid)).toBe(false);
    expect(entries().filter((e) => e.msg === 'upstream process exited')).toEqual([]);
    await expect(transport.send({ jsonrpc: '2.0', method: 'x' })).rejects.toThrow(/over the limit/);
  });

  it('closes the connection when the child closes its stdout but runs on, and stops the child', async () => {
    // libuv never closes fds 0-2 itself: closing fd 1 is the only way to end stdout and live on.
    const script = `process.stdout.write('{"jsonrpc":"2.0","method":"up"}\\n', () => require('node:fs').closeSync(1));
      setInterval(() => {}, 1000);`;
    const { transport, messages, entries, closes } = await start(script);
    const pid = transport.pid!;
    await until(() => messages.length === 1);
    await until(() => closes() === 1);
    expect(transport.closeReason()).toBe('it closed its stdout while still running');
    expect(entries().find((e) => e.level === 50)?.msg).toMatch(/closed its stdout/);
    await transport.close();
    expect(isAlive(pid)).toBe(false);
    await expect(transport.send({ jsonrpc: '2.0', method: 'x' })).rejects.toThrow(/closed its stdout/);
  });

  it('reports the exit status, not the end of stdout, of a child that exits', async () => {
    const { transport, closes } = await start(`setTimeout(() => process.exit(4), 50);`);
    await until(() => closes() === 1);
    expect(transport.closeReason()).toBe('the process exited with code 4');
  });

  it('logs a long stderr line cut, with a marker, and the last line even without a newline', async () => {
    const { entries } = await start(`process.stderr.write('e'.repeat(20000) + '\\nshort\\n\\n' + 'last words');`);
    await until(() => entries().filter((e) => e.msg === 'upstream stderr').length === 3);
    expect(entries().filter((e) => e.msg === 'upstream stderr').map((e) => e.stderr)).toEqual([
      `${'e'.repeat(MAX_STDERR_LINE_CHARS)}… [${20000 - MAX_STDERR_LINE_CHARS} more characters]`,
      'short',
      'last words',
    ]);
  });

  it('logs stderr lines and stray stdout lines through the redactText it is given', async () => {
    const hide = (text: string) => text.replaceAll('hunter2top', '[REDACTED]');
    const { entries } = await start(
      `process.stderr.write('called with {"password":"hunter2top"}\\n' + 'hunter2top ' + 'e'.repeat(20000) + '\\n');
       process.stdout.write('debug: password=hunter2top\\n');`,
      {},
      {},
      hide,
    );
    await until(() => entries().filter((e) => e.msg === 'upstream stderr').length === 2 && entries().some((e) => e.msg.includes('not a JSON-RPC message')));
    expect(entries().filter((e) => e.msg === 'upstream stderr').map((e) => e.stderr)).toEqual([
      'called with {"password":"[REDACTED]"}',
      // A long line is cut first (what is held stays bounded), and what is kept is redacted.
      `[REDACTED] ${'e'.repeat(MAX_STDERR_LINE_CHARS - 11)}… [${20011 - MAX_STDERR_LINE_CHARS} more characters]`,
    ]);
    expect(entries().find((e) => e.msg.includes('not a JSON-RPC message'))!.line).toBe('debug: password=[REDACTED]');
  });

  it('logs at most so many stray stdout lines a second, and counts the rest', async () => {
    const { entries } = await start(`for (let i = 0; i < 1000; i++) process.stdout.write('stray ' + i + '\\n');`);
    await until(() => entries().some((e) => /stray lines? not logged/.test(e.msg)));
    const lines = entries().filter((e) => e.msg.includes('not a JSON-RPC message'));
    const skipped = entries().filter((e) => /stray lines? not logged/.test(e.msg)).reduce((n, e) => n + (e.skipped as number), 0);
    expect(lines.length).toBeGreaterThanOrEqual(100);
    expect(lines.length + skipped).toBe(1000);
    expect(lines[0].line).toBe('stray 0');
  });

  it('logs at most so many stderr lines a second, and counts the rest', async () => {
    const { entries } = await start(`for (let i = 0; i < 1000; i++) process.stderr.write('line ' + i + '\\n');`);
    await until(() => entries().some((e) => / lines? not logged/.test(e.msg)));
    const lines = entries().filter((e) => e.msg === 'upstream stderr');
    const skipped = entries().filter((e) => / lines? not logged/.test(e.msg)).reduce((n, e) => n + (e.skipped as number), 0);
    expect(lines.length).toBeGreaterThanOrEqual(100);
    expect(lines.length + skipped).toBe(1000);
    expect(lines[0].stderr).toBe('line 0');
    expect(skipped).toBeGreaterThan(0);
  });

  it('drops stdout lines that are JSON but not JSON-RPC messages, and survives a handler that throws', async () => {
    const lines = ['5', 'null', '[1]', '{"a":1}', '{"jsonrpc":"2.0","method":"first"}', '{"jsonrpc":"2.0","method":"second"}'];
    const { transport, messages, entries } = await start(`process.stdout.write(${JSON.stringify(lines.join('\n') + '\n')});`);
    const delivered: JsonRpcMessage[] = [];
    // Anything thrown here runs inside the stdout 'data' handler: uncaught, it would end the process.
    transport.onmessage = (m) => {
      delivered.push(m);
      if (delivered.length === 1) throw new Error('a bug in a listener');
    };
    await until(() => delivered.length === 2);
    expect(messages).toEqual([]);
    expect(delivered.map((m) => (m as { method: string }).method)).toEqual(['first', 'second']);
    expect(entries().filter((e) => e.msg.includes('not a JSON-RPC message'))).toHaveLength(4);
    expect(entries().filter((e) => e.msg === 'handling a message from the upstream failed')).toHaveLength(1);
  });

  it("gives the child the gateway's own variables, over its configured env", async () => {
    const report = `const { A, CHAIN } = process.env;
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'env', params: { A, CHAIN } }) + '\\n');`;
    const { messages } = await start(report, { A: 'a', CHAIN: 'mine' }, { CHAIN: '/etc/switchboard.yaml' });
    await until(() => messages.length === 1);
    expect(messages[0]).toMatchObject({ params: { A: 'a', CHAIN: '/etc/switchboard.yaml' } });
  });

  /**
   * A child that starts a grandchild in its process group (as npx, sh or a server starting a
   * browser does) and reports the grandchild's pid. The grandchild ignores SIGTERM, so only
   * the SIGKILL after the grace period ends it.
   */
  const WITH_GRANDCHILD = `const { spawn } = require('node:child_process');
    const grandchild = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: 'ignore' });
    grandchild.unref();
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'grandchild', params: { pid: grandchild.pid } }) + '\\n');
    process.stdin.on('end', () => process.exit(0));
    process.stdin.resume();
    if (process.env.CRASH) setTimeout(() => process.exit(1), 100);`;
  const groupExists = (pgid: number) => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it("a close ends the child's whole process group, even after the child itself left on its stdin's end", async () => {
    const { transport, messages } = await start(WITH_GRANDCHILD);
    await until(() => messages.length === 1);
    const grandchild = (messages[0] as unknown as { params: { pid: number } }).params.pid;
    const pgid = transport.pid!;
    expect(isAlive(grandchild)).toBe(true);
    await transport.close();
    expect(isAlive(grandchild)).toBe(false);
    expect(groupExists(pgid)).toBe(false);
  });

  it("a child that crashes takes the rest of its process group with it", async () => {
    const { transport, messages, closes } = await start(WITH_GRANDCHILD, { CRASH: '1' });
    await until(() => messages.length === 1);
    const grandchild = (messages[0] as unknown as { params: { pid: number } }).params.pid;
    await until(() => closes() === 1);
    // Nobody called close(): the crash alone is enough.
    await until(() => !isAlive(grandchild));
    expect(groupExists(transport.pid!)).toBe(false);
  });

  it('fails to start a missing command saying where it was looked for, not "spawn X ENOENT"', async () => {
    const config = { name: 'up', transport: 'stdio', command: 'no-such-mcp-server', args: [], env: {} } as unknown as StdioServerConfig;
    const transport = new StdioUpstreamTransport(config, pino({ level: 'silent' }));
    await expect(transport.start()).rejects.toThrow('cannot start command "no-such-mcp-server": not found on PATH');
  });

  it('rejects a write that fails because the child is exiting with its exit status, not EPIPE', async () => {
    // The child closes its stdin (libuv never closes fds 0-2 itself), says so, and exits a while later.
    const script = `require('node:fs').closeSync(0);
      process.stdout.write('{"jsonrpc":"2.0","method":"stdin closed"}\\n');
      setTimeout(() => process.exit(3), 300);`;
    const { transport, messages } = await start(script);
    await until(() => messages.length === 1);
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow('the process exited with code 3');
  });
});
