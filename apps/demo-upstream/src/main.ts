/**
 * describe: the demo upstream. A tiny stdio MCP server ("switchboard-demo") that
 * config/default.yaml starts, so `npm ci && npm start` serves a working gateway
 * with no network: tools echo, add, current_time and random_number, the resource
 * demo://readme and the prompt summarize.
 *
 * stdout carries only MCP messages; diagnostics go to stderr. serveStdio picks
 * the protocol era from the client's opening message (an initialize handshake
 * or a 2026-07-28 request), so the demo answers a gateway of either era.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createDemoServer, DEMO_SERVER_NAME } from './demo-server.js';

serveStdio(() => createDemoServer(), {
  onerror: (error) => process.stderr.write(`${DEMO_SERVER_NAME}: ${error.message}\n`),
});
process.stderr.write(`${DEMO_SERVER_NAME}: serving on stdio (pid ${process.pid})\n`);
