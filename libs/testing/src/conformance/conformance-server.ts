import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { serveSubscriptions } from '../fixtures/server-support.js';
import { complete } from './conformance-completions.js';
import { getPrompt, PROMPTS } from './conformance-prompts.js';
import { readResource, RESOURCES, TEMPLATES } from './conformance-resources.js';
import type { SessionState } from './conformance-state.js';
import { TOOLS } from './conformance-tools.js';

export { DATA_TEMPLATE, STATIC_BINARY_URI, STATIC_TEXT_URI, WATCHED_URI } from './conformance-resources.js';
export { JSON_SCHEMA_2020_12_TOOL } from './conformance-tools.js';

/**
 * The "everything server" that the official conformance suite
 * (`@modelcontextprotocol/conformance`, server scenarios of the 2025 revisions)
 * drives: the tools, resources, prompts and completions it names, each doing
 * what the scenario's description asks for real (no canned answers keyed on
 * the suite's inputs).
 *
 * One instance per connection (stdio) or per HTTP session. Built on the SDK's
 * low-level Server, as the other fixtures are, so every method's answer is
 * written here and nothing is shaped by McpServer's conveniences.
 *
 * Out of scope for the gateway today, but implemented so the direct run can
 * score them: the server->client requests (sampling, elicitation). They are
 * sent related to the tools/call that caused them, so over Streamable HTTP
 * they ride that call's SSE stream.
 */
export const CONFORMANCE_SERVER_NAME = 'switchboard-conformance-fixture';
export const CONFORMANCE_SERVER_VERSION = '1.0.0';

/** Builds one conformance server instance. */
export function createConformanceServer(): Server {
  const server = new Server(
    { name: CONFORMANCE_SERVER_NAME, version: CONFORMANCE_SERVER_VERSION },
    {
      capabilities: {
        tools: {},
        resources: { subscribe: true },
        prompts: {},
        // The SDK's built-in logging/setLevel handler keeps the level that ctx.mcpReq.log applies.
        logging: {},
        completions: {},
      },
    },
  );
  const state: SessionState = {
    server,
    subscriptions: new Set(),
    watchedText: 'Watched resource content',
  };
  const tools = new Map(TOOLS.map((entry) => [entry.definition.name, entry]));

  server.setRequestHandler('tools/list', () => ({ tools: TOOLS.map((entry) => entry.definition) }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name } = request.params;
    const entry = tools.get(name);
    if (!entry) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
    const args = entry.input.safeParse(request.params.arguments ?? {});
    if (!args.success) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${z.prettifyError(args.error)}`);
    }
    return entry.run(args.data as never, ctx, state);
  });

  server.setRequestHandler('resources/list', () => ({ resources: RESOURCES }));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: TEMPLATES }));
  server.setRequestHandler('resources/read', (request) => readResource(request.params.uri, state));
  serveSubscriptions(server, state.subscriptions);

  server.setRequestHandler('prompts/list', () => ({ prompts: PROMPTS }));
  server.setRequestHandler('prompts/get', (request) => getPrompt(request.params.name, request.params.arguments));

  server.setRequestHandler('completion/complete', (request) =>
    complete(request.params.ref, request.params.argument.name, request.params.argument.value),
  );

  return server;
}
