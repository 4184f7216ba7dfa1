/**
 * The bulk fixture over stdio: `node dist/bulk/bulk-stdio.js`, shaped by BULK_* variables
 * (bulk-lists.ts). An upstream with as long a tool and resource list as a test or a
 * measurement asks for; its tools do nothing.
 */
import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { bulkOptionsFromEnv, bulkResources, bulkTools } from './bulk-lists.js';

const options = bulkOptionsFromEnv(process.env);
const server = new Server({ name: 'bulk', version: '1.0.0' }, { capabilities: { tools: {}, resources: {} } });

server.setRequestHandler('tools/list', (request) => {
  const { items, nextCursor } = bulkTools(options, request.params?.cursor);
  return { tools: items, ...(nextCursor !== undefined && { nextCursor }) };
});
server.setRequestHandler('resources/list', (request) => {
  const { items, nextCursor } = bulkResources(options, request.params?.cursor);
  return { resources: items, ...(nextCursor !== undefined && { nextCursor }) };
});
server.setRequestHandler('tools/call', (request) => {
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${request.params.name} does nothing`);
});

server.onerror = (error) => process.stderr.write(`bulk fixture: ${error.message}\n`);
server.onclose = () => process.exit(0);
await server.connect(new StdioServerTransport());
process.stderr.write(`bulk fixture: ${options.tools} tools, ${options.resources} resources on stdio (pid ${process.pid})\n`);
