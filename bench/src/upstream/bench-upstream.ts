/**
 * The upstream every benchmark target serves: `node bench/dist/upstream/bench-upstream.js
 * --stdio | --http`. Tools: echo, payload and BENCH_EXTRA_TOOLS extra ones (see
 * bench-tools.ts); serverInfo.name from BENCH_SERVER_NAME.
 *
 * --http listens on 127.0.0.1:PORT (0 or unset: ephemeral) and prints one stdout line
 * `LISTENING <port>`; SIGTERM/SIGINT close the sessions and exit 0.
 * --stdio speaks newline-delimited JSON-RPC on stdin/stdout and exits when stdin ends.
 */
import type { AddressInfo } from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { benchOptionsFromEnv, createBenchServer } from './bench-tools.js';
import { createStreamableHttpHost } from './http-host.js';

const options = benchOptionsFromEnv(process.env);
const mode = process.argv[2];

if (mode === '--stdio') {
  const server = createBenchServer(options);
  // Exit as soon as the pipe closes: a gateway that stops should not wait on its children.
  server.server.onclose = () => process.exit(0);
  await server.connect(new StdioServerTransport());
} else if (mode === '--http') {
  const rawPort = process.env['PORT'] || '0';
  if (!/^\d+$/.test(rawPort)) throw new Error(`PORT must be a port number, got ${JSON.stringify(rawPort)}`);
  const { http, closeSessions } = createStreamableHttpHost(() => createBenchServer(options));
  http.listen(Number(rawPort), '127.0.0.1', () => {
    process.stdout.write(`LISTENING ${(http.address() as AddressInfo).port}\n`);
  });
  const stop = () => {
    void closeSessions().finally(() => {
      // Keep-alive sockets would otherwise hold the process open.
      http.closeAllConnections();
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} else {
  process.stderr.write('usage: bench-upstream.js --stdio | --http   (env: BENCH_SERVER_NAME, BENCH_EXTRA_TOOLS, PORT)\n');
  process.exit(2);
}
