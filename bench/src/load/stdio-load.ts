import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { LineSplitter } from '@switchboard/core';
import {
  INITIALIZE,
  INITIALIZED_NOTIFICATION,
  isObject,
  outcomeOf,
  requestBody,
  type CallOutcome,
  type McpCaller,
  type RpcRequest,
} from './jsonrpc.js';

/**
 * The stdio load client: one pipe to a spawned server, newline-delimited JSON-RPC,
 * responses matched to requests by id. All workers share the pipe, as a host with one
 * stdio server does.
 */
export class StdioMcpConnection implements McpCaller {
  private nextId = 1;
  private readonly pending = new Map<number, (outcome: CallOutcome) => void>();
  private exitReason: string | undefined;

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    const splitter = new LineSplitter();
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => splitter.push(chunk, (line) => this.onLine(line)));
    child.once('exit', (code, signal) => {
      this.exitReason = `server exited (code ${code}, signal ${signal})`;
      this.failAll(this.exitReason);
    });
    // EPIPE after the child died is reported through the exit above.
    child.stdin.on('error', () => undefined);
  }

  async open(): Promise<void> {
    const outcome = await this.call(INITIALIZE);
    if (!outcome.ok) throw new Error(`initialize failed: ${outcome.error}`);
    this.child.stdin.write(`${INITIALIZED_NOTIFICATION}\n`);
  }

  call(request: RpcRequest): Promise<CallOutcome> {
    if (this.exitReason !== undefined) return Promise.resolve({ ok: false, error: this.exitReason });
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.child.stdin.write(`${requestBody(id, request)}\n`);
    });
  }

  private onLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not protocol output; a well-behaved server logs to stderr
    }
    // Notifications and server->client requests are not answers to anything we sent.
    if (!isObject(message) || typeof message['id'] !== 'number' || 'method' in message) return;
    const resolve = this.pending.get(message['id']);
    if (!resolve) return;
    this.pending.delete(message['id']);
    resolve(outcomeOf(message));
  }

  private failAll(reason: string): void {
    for (const resolve of this.pending.values()) resolve({ ok: false, error: reason });
    this.pending.clear();
  }
}
