/**
 * The conformance fixture over stdio: `node dist/conformance/conformance-stdio.js`.
 * stdout carries only protocol messages; diagnostics go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createConformanceServer } from './conformance-server.js';

const server = createConformanceServer();
server.onerror = (error) => process.stderr.write(`conformance fixture: ${error.message}\n`);
server.onclose = () => process.exit(0);
await server.connect(new StdioServerTransport());
process.stderr.write(`conformance fixture: serving on stdio (pid ${process.pid})\n`);
