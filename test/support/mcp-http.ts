/** The Accept header a Streamable HTTP host sends on POST /mcp (both answer forms). */
export const MCP_ACCEPT = 'application/json, text/event-stream';

/** An initialize request body for protocol 2025-06-18, as a bare HTTP client (curl) would send it. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};
