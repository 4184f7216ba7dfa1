/**
 * The conformance fixture over Streamable HTTP: `node dist/conformance/conformance-http.js`
 * serves POST/GET/DELETE /mcp on 127.0.0.1:PORT with stateful sessions (one
 * server instance each), resumable SSE streams (an in-memory event store and
 * a retry hint), and DNS-rebinding protection (only loopback Host and Origin
 * headers), then prints `LISTENING <port>`.
 */
import { localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/node';
import { serveStreamableHttp } from '../fixtures/http-support.js';
import { createConformanceServer } from './conformance-server.js';
import { InMemoryEventStore } from './event-store.js';

/** The SSE `retry` hint, in ms, a client waits before resuming a closed stream. */
const RETRY_MS = 500;

const validHost = localhostHostValidation();
const validOrigin = localhostOriginValidation();

serveStreamableHttp({
  name: 'conformance',
  log: (message) => process.stderr.write(`conformance fixture: ${message}\n`),
  newServer: createConformanceServer,
  transportOptions: () => ({ eventStore: new InMemoryEventStore(), retryInterval: RETRY_MS }),
  // Both guards answer 403 themselves.
  guard: (req, res) => validHost(req, res) && validOrigin(req, res),
});
