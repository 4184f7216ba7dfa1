import { HttpSessionPool } from '../load/http-load.js';
import type { McpCaller } from '../load/jsonrpc.js';
import type { StdioMcpConnection } from '../load/stdio-load.js';
import type { ManagedProcess } from './managed-process.js';
import type { ToolNames } from './tool-names.js';

export const TARGET_NAMES = ['direct-http', 'direct-stdio', 'switchboard-stdio', 'switchboard-http', 'mcp-proxy'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

/** Every ratio in the report is relative to this target at the same concurrency. */
export const BASELINE: TargetName = 'direct-http';

/** One system under test, started once and kept running for the whole bench. */
export interface Target {
  readonly name: TargetName;
  /** The serving processes: CPU and RSS are summed over these and all their descendants. */
  readonly servingRoots: readonly number[];
  /** The gateway process alone (daemon, mcp-proxy), for its own RSS; undefined for a bare upstream. */
  readonly gatewayPid: number | undefined;
  /** The Streamable HTTP endpoint; undefined for a target driven over stdio. */
  readonly url: string | undefined;
  /** Public names of the bench tools, as discovered through tools/list. */
  tools: ToolNames;
  /** count workers' callers: distinct sessions over HTTP, the one shared pipe over stdio. */
  callers(count: number): Promise<McpCaller[]>;
  stop(): Promise<void>;
}

const UNDISCOVERED: ToolNames = { echo: '', payload: '' };

/** A target reached over Streamable HTTP at url. */
export class HttpTarget implements Target {
  tools = UNDISCOVERED;
  private readonly pool: HttpSessionPool;

  /** processes: stopped in this order (a gateway before the upstream it fronts). */
  constructor(
    readonly name: TargetName,
    readonly url: string,
    private readonly processes: readonly ManagedProcess[],
    readonly gatewayPid: number | undefined,
  ) {
    this.pool = new HttpSessionPool(new URL(url));
  }

  get servingRoots(): number[] {
    return this.processes.map((managed) => managed.pid);
  }

  callers(count: number): Promise<McpCaller[]> {
    return this.pool.callers(count);
  }

  async stop(): Promise<void> {
    await this.pool.close().catch(() => undefined);
    for (const managed of this.processes) await managed.stop();
  }
}

/** A server driven directly over its stdin/stdout. */
export class StdioTarget implements Target {
  tools = UNDISCOVERED;
  readonly gatewayPid = undefined;
  readonly url = undefined;

  constructor(
    readonly name: TargetName,
    private readonly managed: ManagedProcess,
    private readonly connection: StdioMcpConnection,
  ) {}

  get servingRoots(): number[] {
    return [this.managed.pid];
  }

  async callers(count: number): Promise<McpCaller[]> {
    return Array.from({ length: count }, () => this.connection);
  }

  async stop(): Promise<void> {
    // Closing stdin is the stdio transport's own shutdown signal; SIGTERM follows if ignored.
    this.managed.child.stdin.end();
    await this.managed.stop();
  }
}
