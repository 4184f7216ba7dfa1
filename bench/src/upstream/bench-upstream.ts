/**
 * The upstream every benchmark target serves: `node bench/dist/upstream/bench-upstream.js
 * --stdio | --http`. Tools: echo, payload and BENCH_EXTRA_TOOLS extra ones (see
 * bench-tools.ts); serverInfo.name from BENCH_SERVER_NAME.
 *
 * --http listens on 127.0.0.1:PORT (0 or unset: ephemeral) and prints one stdout line
 * `LISTENING <port>`; SIGTERM/SIGINT close the sessions and exit 0.
 * --stdio speaks newline-delimited JSON-RPC on stdin/stdout and exits when stdin ends.
 */
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { serveStreamableHttp } from '@switchboard/testing';
import { benchOptionsFromEnv, createBenchServer } from './bench-tools.js';

const options = benchOptionsFromEnv(process.env);
const mode = process.argv[2];

if (mode === '--stdio') {
  const server = createBenchServer(options);
  // Exit as soon as the pipe closes: a gateway that stops should not wait on its children.
  server.server.onclose = () => process.exit(0);
  await server.connect(new StdioServerTransport());
} else if (mode === '--http') {
  // The same sessionful host as the test fixtures: the SDK's Streamable HTTP transport in its
  // default configuration (SSE answers), one server per session, as SDK examples do.
  serveStreamableHttp({ name: options.name, newServer: () => createBenchServer(options).server });
} else {
  process.stderr.write('usage: bench-upstream.js --stdio | --http   (env: BENCH_SERVER_NAME, BENCH_EXTRA_TOOLS, PORT)\n');
  process.exit(2);
}
