import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import * as z from 'zod';

/** How a bench upstream is shaped; spawned processes get it from BENCH_* variables. */
export interface BenchUpstreamOptions {
  /** serverInfo.name; BENCH_SERVER_NAME, default `bench`. */
  readonly name: string;
  /** Number of extra tools tool_000.. (tools/list benchmarks); BENCH_EXTRA_TOOLS, default 0. */
  readonly extraTools: number;
}

export const BENCH_UPSTREAM_VERSION = '1.0.0';

/** Largest payload the `payload` tool builds: 16 MiB keeps a typo from exhausting memory. */
export const MAX_PAYLOAD_KIB = 16 * 1024;

export function benchOptionsFromEnv(env: NodeJS.ProcessEnv): BenchUpstreamOptions {
  const rawExtra = env['BENCH_EXTRA_TOOLS'] ?? '';
  if (rawExtra !== '' && !/^\d+$/.test(rawExtra)) {
    throw new Error(`BENCH_EXTRA_TOOLS must be a non-negative integer, got ${JSON.stringify(rawExtra)}`);
  }
  return { name: env['BENCH_SERVER_NAME'] || 'bench', extraTools: rawExtra === '' ? 0 : Number(rawExtra) };
}

// Built once per size and shared by every session: the benchmark measures relaying the
// bytes, not the upstream building them.
const payloads = new Map<number, string>();

/** Exactly kib * 1024 ASCII characters. */
export function payloadText(kib: number): string {
  let text = payloads.get(kib);
  if (text === undefined) {
    const line = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_'; // 64 characters
    text = line.repeat(kib * 16);
    payloads.set(kib, text);
  }
  return text;
}

function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

/**
 * One bench upstream instance (one per stdio connection or HTTP session). It is the
 * SDK's McpServer in its default configuration on purpose: the baseline should be
 * what a typical SDK-built server costs, with nothing tuned.
 */
export function createBenchServer(options: BenchUpstreamOptions): McpServer {
  const server = new McpServer({ name: options.name, version: BENCH_UPSTREAM_VERSION });

  server.registerTool(
    'echo',
    { description: 'Returns the text it is given', inputSchema: z.object({ text: z.string() }) },
    ({ text }) => textResult(text),
  );

  server.registerTool(
    'payload',
    {
      description: 'Returns one text block of exactly kib * 1024 ASCII characters',
      inputSchema: z.object({ kib: z.number().int().min(0).max(MAX_PAYLOAD_KIB) }),
    },
    ({ kib }) => textResult(payloadText(kib)),
  );

  for (let i = 0; i < options.extraTools; i++) {
    const name = `tool_${String(i).padStart(3, '0')}`;
    server.registerTool(
      name,
      {
        description: `Extra tool ${i}: makes the tool list long enough to page`,
        inputSchema: z.object({ value: z.string().optional(), count: z.number().int().optional() }),
      },
      () => textResult(name),
    );
  }
  return server;
}
