import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { isoTime } from './demo-time.js';

export const DEMO_SERVER_NAME = 'switchboard-demo';

const README = `# Switchboard demo upstream

You are talking to Switchboard, an MCP gateway: one MCP endpoint in front of many
upstream MCP servers. This text comes from "switchboard-demo", the small upstream
the default configuration starts, so a fresh install has something to serve
without any network access.

Try its tools (echo, add, current_time, random_number) and its "summarize" prompt,
then add your own servers under mcpServers in your configuration file.
`;

/** The demo upstream's tools, resource and prompt; one instance per connection. */
export function createDemoServer(): McpServer {
  const server = new McpServer(
    { name: DEMO_SERVER_NAME, version: '1.0.0' },
    { instructions: 'A demo server bundled with Switchboard: simple tools, one resource, one prompt.' },
  );
  const readOnly = { readOnlyHint: true, openWorldHint: false } as const;

  server.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Returns the text it is given',
      inputSchema: z.object({ text: z.string().describe('Text to send back') }),
      annotations: { ...readOnly, idempotentHint: true },
    },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );

  server.registerTool(
    'add',
    {
      title: 'Add',
      description: 'Adds two numbers',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ sum: z.number() }),
      annotations: { ...readOnly, idempotentHint: true },
    },
    ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );

  server.registerTool(
    'current_time',
    {
      title: 'Current time',
      description: 'The current time in ISO 8601, in UTC or in the given IANA time zone',
      inputSchema: z.object({
        timezone: z.string().optional().describe('IANA time zone such as Europe/Paris; default UTC'),
      }),
      outputSchema: z.object({ iso: z.string(), timezone: z.string() }),
      annotations: readOnly,
    },
    ({ timezone }) => {
      try {
        const iso = isoTime(new Date(), timezone);
        return { content: [{ type: 'text', text: iso }], structuredContent: { iso, timezone: timezone ?? 'UTC' } };
      } catch (error) {
        return toolError((error as Error).message);
      }
    },
  );

  server.registerTool(
    'random_number',
    {
      title: 'Random number',
      description: 'A random integer between min and max, both included',
      inputSchema: z.object({ min: z.number().int().safe(), max: z.number().int().safe() }),
      outputSchema: z.object({ value: z.number().int() }),
      annotations: { ...readOnly, idempotentHint: false },
    },
    ({ min, max }) => {
      if (min > max) return toolError(`min (${min}) must not exceed max (${max})`);
      const value = min + Math.floor(Math.random() * (max - min + 1));
      return { content: [{ type: 'text', text: String(value) }], structuredContent: { value } };
    },
  );

  server.registerResource(
    'readme',
    'demo://readme',
    { title: 'About Switchboard', description: 'What this demo is and what to do next', mimeType: 'text/markdown' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/markdown', text: README }] }),
  );

  server.registerPrompt(
    'summarize',
    {
      title: 'Summarize',
      description: 'Asks the model to summarize a text',
      argsSchema: z.object({ text: z.string().describe('The text to summarize') }),
    },
    ({ text }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Summarize the following text in a few sentences:\n\n${text}` } }],
    }),
  );

  return server;
}

function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}
